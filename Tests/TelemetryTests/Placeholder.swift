// TelemetryTests: filled in by its issue. (Added so the package resolves: Package.swift declares this target.)
