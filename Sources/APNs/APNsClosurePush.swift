/// A push whose answer goes to a closure: the single-push `send(_:environment:completion:)` forms.
final class APNsClosurePush: APNsPush {
    let request: APNsRequest
    let environment: APNsEnvironment
    private let completion: @Sendable (APNsResult) -> Void

    init(_ request: APNsRequest, environment: APNsEnvironment, completion: @escaping @Sendable (APNsResult) -> Void) {
        self.request = request
        self.environment = environment
        self.completion = completion
    }

    func answered(_ result: consuming APNsResult) { completion(result) }
}
