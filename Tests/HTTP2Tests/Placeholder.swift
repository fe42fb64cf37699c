// HTTP2Tests: filled in by its issue.
