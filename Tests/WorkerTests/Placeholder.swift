// WorkerTests: filled in by its issue.
