"""``python -m devlint.verify`` runs the same command as ``devlint verify``."""
from devlint.verify.cli import verify_command

if __name__ == "__main__":
    verify_command(prog_name="devlint verify")
