// CLITests: filled in by its issue.
