"""How many leading words an "always allow" suggestion keeps (``git commit -m x`` ->
``git commit *``, ``npm run dev`` -> ``npm run dev *``; unknown programs keep one).

The counts follow each tool's command structure (``git help -a``, ``npm help``,
``docker --help``, ``kubectl --help``, ``gh help``, ``aws help`` ...): a program with
subcommands keeps its subcommand; one with subcommand groups, or a runner of named
scripts, keeps one word more.
"""

from __future__ import annotations

from collections.abc import Mapping

from dm_cc.permissions.shell.tables import table

#: Leading words -> how many words an "always allow" suggestion keeps.
ARITY: Mapping[tuple[str, ...], int] = table(
    # programs with subcommands: keep the subcommand
    ("git, npm, pnpm, yarn, bun, npx, bunx, cargo, go, docker, docker-compose, podman,"
     " kubectl, helm, pip, pip3, uv, poetry, pdm, hatch, rye, make, terraform, tofu, dotnet,"
     " mvn, gradle, gradlew, brew, apt, apt-get, dnf, yum, pacman, systemctl, journalctl,"
     " rustup, deno, just, nx, turbo, bundle, rails, rake, mix, composer, conda, mamba,"
     " swift, flutter, dart, pixi, nix, gem, cabal, stack, opam, ansible-galaxy, minikube,"
     " kind, vercel, netlify, wrangler, firebase, heroku, flyctl, fly", 2),
    # cloud CLIs: service then action
    ("gh, aws, az, gcloud, glab", 3),
    # script runners: the script's name
    ("npm run, pnpm run, yarn run, bun run, uv run, poetry run, pdm run, hatch run", 3),
    ("python -m, python3 -m, py -m", 3),
    # subcommand groups
    ("docker compose, docker image, docker container, docker volume, docker network,"
     " docker system, docker buildx, docker context, docker builder", 3),
    ("git stash, git remote, git submodule, git worktree, git bisect, git notes, git lfs,"
     " git sparse-checkout", 3),
    ("kubectl config, kubectl rollout, kubectl auth, kubectl certificate", 3),
    ("go mod, go tool, cargo +nightly, uv pip, uv tool, terraform state, terraform workspace,"
     " npm exec, pnpm exec, pnpm dlx, yarn dlx, dotnet ef, poetry env", 3),
    ("yarn workspace", 4),  # yarn workspace NAME SCRIPT
)
