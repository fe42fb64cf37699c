/// A push whose answer goes to a closure: the single-push `send(_:environment:completion:)` forms.
final class APNsClosurePush: APNsPush, @unchecked Sendable {
    private let completion: @Sendable (APNsResult) -> Void

    init(_ request: APNsRequest, environment: APNsEnvironment, completion: @escaping @Sendable (APNsResult) -> Void) {
        self.completion = completion
        super.init(request, environment: environment)
    }

    override func answered(_ result: consuming APNsResult) { completion(result) }
}
