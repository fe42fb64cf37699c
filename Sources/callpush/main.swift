// callpush command line; subcommands arrive with their issues.
print("callpush: not yet built")
