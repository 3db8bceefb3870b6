"""Entry point for `python -m agentctl`."""

from agentctl.cli.main import main

if __name__ == "__main__":
    main()
