extension APNsReason {
    /// A plain-language explanation and what to do, for `callpush send` and logs.
    package var hint: String { hint(request: nil, endpoint: nil) }

    /// ``hint`` with specifics from the request that got the answer (payload overshoot, topic, environment).
    package func hint(request: APNsRequest?, endpoint: APNsEndpoint?) -> String {
        let environment = endpoint.map { $0.isProduction ? "production" : ($0.isSandbox ? "sandbox" : "a custom server") }
        switch self {
        case .badDeviceToken:
            var text = "The device token is malformed or belongs to the other APNs environment. Tokens from apps run "
                + "from Xcode (development signing) and the Simulator are sandbox tokens (api.sandbox.push.apple.com); "
                + "TestFlight, Ad Hoc and App Store builds give production tokens (api.push.apple.com)."
            if let environment { text += " This push went to \(environment): try the other environment before deleting the token." }
            return text
        case .deviceTokenNotForTopic:
            var text = "The token belongs to a different app or topic. Check apns-topic is the app's bundle ID, and that "
                + "VoIP pushes use the PushKit VoIP token with topic <bundle>.voip while alert pushes use the "
                + "UserNotifications token with the plain bundle ID."
            if let request { text += " This push used topic \(request.topic) with push type \(request.pushType)." }
            return text
        case .badTopic:
            var text = "apns-topic is not valid. It must be the bundle ID plus the push type's suffix: .voip for voip, "
                + ".push-type.liveactivity for Live Activities, none for alert and background."
            if let request, let suffix = request.pushType.topicSuffix, !suffix.isEmpty, !request.topic.hasSuffix(suffix) {
                text += " Push type \(request.pushType) needs a topic ending in \(suffix); this one is \(request.topic)."
            }
            return text
        case .missingTopic:
            return "apns-topic is required with token auth and with multi-topic certificates: send the bundle ID."
        case .topicDisallowed:
            return "Pushing to this topic is not allowed with these credentials: the key or certificate is not for this "
                + "app (or, for broadcast, the bundle ID carries a push-type suffix)."
        case .payloadTooLarge:
            if let request {
                let limit = request.pushType.maximumPayloadSize
                let over = request.payload.count - limit
                if over > 0 {
                    return "The payload is \(request.payload.count) bytes, \(over) bytes over the \(limit)-byte limit for "
                        + "\(request.pushType). Shorten the texts or drop custom keys."
                }
            }
            return "The payload is over the limit: 4096 bytes (5120 for VoIP). Shorten the texts or drop custom keys."
        case .payloadEmpty:
            return "The request had no body: send a JSON object with an aps dictionary."
        case .badPriority:
            return "apns-priority is not allowed: background pushes must use 5, Live Activities and location 5 or 10; "
                + "valid values are 1, 5 and 10."
        case .badExpirationDate:
            return "apns-expiration must be a UNIX time in seconds (or 0 for a single attempt)."
        case .badCollapseId:
            return "apns-collapse-id is longer than 64 bytes."
        case .badMessageId:
            return "apns-id must be a canonical UUID (8-4-4-4-12 lowercase hex)."
        case .duplicateHeaders:
            return "A header was sent twice; this is a bug in the sender."
        case .invalidPushType:
            return "apns-push-type is not a known value (alert, background, voip, location, complication, "
                + "fileprovider, mdm, liveactivity, pushtotalk, widgets, controls)."
        case .missingDeviceToken, .badPath:
            return "The :path must be /3/device/<hex device token>."
        case .methodNotAllowed:
            return "APNs only accepts POST."
        case .idleTimeout:
            return "APNs closed an idle connection; retry on a new connection."
        case .expiredProviderToken:
            return "The provider token's iat is more than an hour old. callpush mints a new one and retries; if this "
                + "repeats, the machine's clock is probably wrong (check NTP)."
        case .invalidProviderToken:
            return "APNs could not verify the provider token: check the key ID (kid) matches the .p8 file, the team ID "
                + "(iss) is the team that owns the key, and the key has not been revoked in the developer portal."
        case .missingProviderToken:
            return "No authorization header and no client certificate: configure a .p8 key or a certificate."
        case .unrelatedKeyIdInToken:
            return "This connection was first used with a different key; tokens from an unrelated key need a new "
                + "connection."
        case .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken:
            var text = "The key is scoped to the other environment (team-scoped keys are sandbox-only or "
                + "production-only). Use a key for this environment or send to the other host."
            if let environment { text += " This push went to \(environment)." }
            return text
        case .badCertificate:
            return "The client certificate is not valid for APNs (expired, revoked, or not an APNs certificate)."
        case .badCertificateEnvironment:
            return "The client certificate is for the other environment: a sandbox certificate cannot push to "
                + "production and vice versa (or use a Sandbox & Production certificate)."
        case .forbidden:
            return "APNs does not allow this action with these credentials. Do not retry."
        case .expiredToken, .unregistered:
            return "The device token is no longer valid for this topic (app removed, notifications turned off, or "
                + "the token expired). Stop sending to it unless the app registers the same token again later."
        case .tooManyRequests:
            return "Too many pushes to this device token in a short time; retry later with backoff."
        case .tooManyProviderTokenUpdates:
            return "The provider token changed more than once in 20 minutes on one connection. Keep tokens for at "
                + "least 20 minutes; this connection should be replaced."
        case .internalServerError:
            return "APNs had an internal error; retry later on a new connection."
        case .serviceUnavailable:
            return "APNs is unavailable; retry later with backoff."
        case .shutdown:
            return "This APNs server is shutting down; retry on a new connection."
        case .timeout:
            return "No answer before the deadline. APNs may or may not have delivered the push."
        case .connectionLost:
            return "The connection broke before APNs answered. APNs may or may not have delivered the push."
        case .notProcessed:
            return "APNs did not process this push (GOAWAY or refused stream); it is safe to send again."
        default:
            return isKnown ? "See Apple's documentation for \(rawValue)." : "Unknown reason \(rawValue); classified by the HTTP status."
        }
    }
}
