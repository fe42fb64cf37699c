/// What a server handler must do with one stream, as decided by ``APNsMockValidator/handle(_:connection:)``.
///
/// In order: wait ``delay``; then perform ``action``; then, when ``sendGoAwayAfter`` is set, send GOAWAY
/// (NO_ERROR, last stream id = this stream, debug data ``goAwayDebugData``) and stop accepting streams on the
/// connection.
struct APNsMockDecision: Sendable {
    enum Action: Sendable {
        /// Send this response (HEADERS, then DATA with END_STREAM when the body is not empty).
        case respond(APNsMockResponse)
        /// Never answer this stream (the client's deadline must fire). The handler may reset it when the
        /// connection closes.
        case stall
        /// Close the TCP connection without GOAWAY (simulates a lost connection); every open stream is lost.
        case dropConnection
    }

    var action: Action
    /// Latency to add before acting. Default: zero.
    package var delay: Duration
    /// Send GOAWAY after this stream (the "GOAWAY after N streams" fault). Default: false.
    var sendGoAwayAfter: Bool
    /// GOAWAY debug data: JSON `{"reason":"Shutdown"}` as Apple describes.
    var goAwayDebugData: [UInt8]

    init(action: Action, delay: Duration = .zero, sendGoAwayAfter: Bool = false, goAwayDebugData: [UInt8] = []) {
        self.action = action
        self.delay = delay
        self.sendGoAwayAfter = sendGoAwayAfter
        self.goAwayDebugData = goAwayDebugData
    }

    /// The response, when the action is `.respond`.
    var response: APNsMockResponse? {
        if case .respond(let response) = action { return response }
        return nil
    }
}
