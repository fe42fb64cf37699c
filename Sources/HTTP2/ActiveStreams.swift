/// The streams of one client connection that are on the wire: an unordered array where each stream knows its slot,
/// so insertion and removal are O(1) without hashing. Callbacks find a stream through nghttp2's stream user data
/// (an unretained pointer that is valid exactly while the stream is in here). Loop-thread only.
struct ActiveStreams {
    private var items: [HTTP2ClientStream] = []

    var count: Int { items.count }
    var isEmpty: Bool { items.isEmpty }

    mutating func insert(_ stream: HTTP2ClientStream) {
        stream.slot = items.count
        items.append(stream)
    }

    /// Removes `stream`; false when it was not in here.
    @discardableResult
    mutating func remove(_ stream: HTTP2ClientStream) -> Bool {
        let slot = stream.slot
        guard slot >= 0, slot < items.count, items[slot] === stream else { return false }
        let last = items.removeLast()
        if last !== stream {
            items[slot] = last
            last.slot = slot
        }
        stream.slot = -1
        return true
    }

    /// Calls `body` for every stream (any order).
    func forEach(_ body: (HTTP2ClientStream) -> Void) {
        for stream in items { body(stream) }
    }

    /// Empties the set; returns the streams by ascending stream id.
    mutating func takeAll() -> [HTTP2ClientStream] {
        let all = items.sorted { $0.streamID < $1.streamID }
        for stream in all { stream.slot = -1 }
        items = []
        return all
    }
}
