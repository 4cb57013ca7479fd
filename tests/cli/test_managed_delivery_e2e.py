"""The managed policy from a URL as a person meets it: real ``dm_cc`` processes
against a loopback HTTPS server (self-signed, named by the managed config's
``ca_file``) -- the delivered deny decides a real run, the server going down leaves the
last good copy in force and every command says so, and with no good copy dm_cc does
not start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from support.https_server import PolicyServer, sha256

ENFORCED = b"""rules:
  - {permission: bash, pattern: "echo *", action: deny, reason: "org: no echo"}
"""


def dm_cc(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dm_cc", *argv], cwd=project,
                          capture_output=True, text=True, timeout=60)


def test_delivered_policy_decides_is_kept_when_the_server_is_down_and_is_required(project):
    server = PolicyServer().start()
    server.files["enforced.yaml"] = ENFORCED
    managed = Path(os.environ["DM_CC_MANAGED_DIR"])
    managed.mkdir()
    url = server.url("enforced.yaml")
    (managed / "config.yaml").write_text(f"""managed_policy:
  ca_file: {server.cert.cert}
  files:
    enforced.yaml: {{url: "{url}", sha256: {sha256(ENFORCED)}}}
""")
    user = Path(os.environ["DM_CC_HOME"]) / "config"
    user.mkdir(parents=True)
    (user / "policy.yaml").write_text("rules:\n  - {permission: bash, pattern: 'echo *', "
                                      "action: allow}\n")
    try:
        ran = dm_cc(project, "run", "--model", "offline", "run echo hi")
        assert ran.returncode == 0, ran.stderr
        assert "denied" in ran.stdout and f"{url}:2" in ran.stdout and "hi\n" not in ran.stdout
        assert "managed policy" not in ran.stderr
    finally:
        server.stop()

    shown = dm_cc(project, "policy", "show")
    assert shown.returncode == 0, shown.stderr
    copy = Path(os.environ["DM_CC_HOME"]) / "state" / "managed" / "enforced.yaml"
    origins = shown.stdout.split("managed files (the organisation's):\n")[1].splitlines()
    assert origins[0] == f"  enforced.yaml: from {url} (sha256 pinned)"
    assert origins[1].startswith(f"    copy: {copy}, fetched 20")
    fetched = origins[1].split("fetched ")[1].split(",")[0]
    assert origins[2].startswith("    the last fetch (20")
    assert origins[2].endswith(f"failed: connection refused; the last good copy, fetched "
                               f"{fetched}, is in force")
    warning = (f"dm_cc: warning: managed policy enforced.yaml: fetching {url} failed "
               f"(connection refused); the last good copy, fetched {fetched}, is in force")
    assert warning in shown.stderr

    ran = dm_cc(project, "run", "--model", "offline", "run echo hi")
    assert ran.returncode == 0 and "denied" in ran.stdout and warning in ran.stderr

    shutil.rmtree(copy.parent)          # no good copy left, and the server still down
    ran = dm_cc(project, "run", "--model", "offline", "run echo hi")
    assert ran.returncode == 2
    assert (f"{managed / 'config.yaml'}:4: managed policy enforced.yaml: no good copy: the "
            f"fetch from {url} failed (connection refused); dm_cc does not start without the "
            "organisation's policy") in ran.stderr
