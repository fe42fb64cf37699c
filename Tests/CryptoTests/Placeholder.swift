// CryptoTests: filled in by its issue.
