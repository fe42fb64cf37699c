// APNsTests: filled in by its issue.
