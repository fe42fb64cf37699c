/// The apps one ``APNsAppRouter`` serves, and the client settings every app's connections share.
package struct APNsAppsConfiguration: Sendable {
    /// The apps; bundle ids are unique, and an app without a bundle id (serving every bundle id) is the only app.
    /// Default: none; required.
    package var apps: [APNsAppConfiguration]
    /// Endpoints, timers and pool size of every credential's client; its `credentials` are replaced by each
    /// credential's own.
    /// Default: none; required.
    var client: APNsClientConfiguration
    /// Pushes one credential may have in flight when more than one credential is configured; past it a push is
    /// answered at once with `AppInFlightLimit` (retry later), so one app's stuck connections cannot fill the
    /// worker's in-flight window and stall the other apps. nil: no bound.
    /// Default: 5000 (half of `callpush run`'s default `worker.max-in-flight`).
    var maximumInFlightPerCredential: Int?

    package init(apps: [APNsAppConfiguration], client: APNsClientConfiguration, maximumInFlightPerCredential: Int? = 5000) {
        self.apps = apps
        self.client = client
        self.maximumInFlightPerCredential = maximumInFlightPerCredential
    }

    /// One line per problem: no apps, a repeated bundle id, a catch-all app beside others, a key id or team id
    /// that is not 10 characters, one key id with two different keys or teams.
    package var problems: [String] {
        var problems: [String] = []
        if apps.isEmpty { problems.append("no APNs apps configured") }
        var seen: Set<String> = []
        for app in apps {
            guard let bundleID = app.bundleID else {
                if apps.count > 1 { problems.append("an app without a bundle id must be the only app") }
                continue
            }
            if bundleID.isEmpty { problems.append("an app has an empty bundle id") }
            if !seen.insert(bundleID).inserted { problems.append("bundle id \(bundleID) is configured twice") }
            if case .token(let token) = app.credentials.kind {
                if token.keyID.count != 10 { problems.append("app \(bundleID): key id must be 10 characters") }
                if token.teamID.count != 10 { problems.append("app \(bundleID): team id must be 10 characters") }
            }
        }
        var keys: [String: APNsTokenCredentials] = [:]
        for case .token(let token) in apps.map(\.credentials.kind) {
            if let other = keys[token.keyID], other != token {
                problems.append("key id \(token.keyID) is configured with two different key files or teams")
            }
            keys[token.keyID] = token
        }
        return problems
    }

    /// The distinct credentials, in the order they first appear, each with its apps and its metric label: the key id
    /// for token credentials, `certificate:<first bundle id>` for certificates.
    var credentialGroups: [(label: String, credentials: APNsCredentials, apps: [APNsAppConfiguration])] {
        var groups: [(label: String, credentials: APNsCredentials, apps: [APNsAppConfiguration])] = []
        for app in apps {
            if let index = groups.firstIndex(where: { $0.credentials == app.credentials }) {
                groups[index].apps.append(app)
                continue
            }
            let label: String
            switch app.credentials.kind {
            case .token(let token): label = token.keyID
            case .certificate: label = "certificate:" + app.metricLabel
            }
            groups.append((label, app.credentials, [app]))
        }
        return groups
    }
}
