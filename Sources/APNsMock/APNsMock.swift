// Module APNsMock: see docs/ and the issue that builds it. Filled in by its issue.
