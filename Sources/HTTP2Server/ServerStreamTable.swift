/// A server connection's open streams by id: a direct-mapped power-of-two array indexed by `id >> 1`, with a
/// dictionary for the rare stream whose slot is taken. Clients number their streams 1, 3, 5, …, so the open ones
/// fall into distinct consecutive slots and an operation is an index and a comparison, without hashing (a
/// `Dictionary` ran SipHash three times per request). The array doubles when half full. Loop-thread only.
struct ServerStreamTable {
    private var slots: [ServerStream?]
    private var overflow: [Int32: ServerStream] = [:]
    private(set) var count = 0

    init() { slots = Array(repeating: nil, count: 64) }

    private func slot(_ id: Int32) -> Int { Int(UInt32(bitPattern: id) >> 1) & (slots.count - 1) }

    subscript(id: Int32) -> ServerStream? {
        if let stream = slots[slot(id)], stream.streamID == id { return stream }
        return overflow.isEmpty ? nil : overflow[id]
    }

    /// Adds `stream` under its id (replacing a stream with the same id).
    mutating func insert(_ stream: ServerStream) {
        if remove(stream.streamID) == nil, (count + 1) * 2 > slots.count { grow() }
        place(stream)
        count += 1
    }

    private mutating func place(_ stream: ServerStream) {
        let index = slot(stream.streamID)
        if slots[index] == nil {
            slots[index] = stream
        } else {
            overflow[stream.streamID] = stream
        }
    }

    /// Removes and returns the stream with id `id`.
    @discardableResult
    mutating func remove(_ id: Int32) -> ServerStream? {
        let index = slot(id)
        if let stream = slots[index], stream.streamID == id {
            slots[index] = nil
            count -= 1
            return stream
        }
        guard !overflow.isEmpty, let stream = overflow.removeValue(forKey: id) else { return nil }
        count -= 1
        return stream
    }

    private mutating func grow() {
        let streams = all
        slots = Array(repeating: nil, count: slots.count * 2)
        overflow = [:]
        for stream in streams { place(stream) }
    }

    mutating func removeAll() {
        slots = Array(repeating: nil, count: 64)
        overflow = [:]
        count = 0
    }

    /// The open streams, in no particular order.
    var all: [ServerStream] { slots.compactMap { $0 } + overflow.values }
}
