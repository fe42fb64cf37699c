/// What identifies a call across its events: its app (the event's `topic`) and its `call_id`, so one app's hang-up
/// never ends another app's call of the same id.
///
/// Hashed once, when it is made: an event's key is looked up several times on its way (the batch's look-ahead, the
/// ``CallTracker``'s calls and ended-call memory, the completion), and each lookup hashes only ``hash``, not the two
/// strings again. ``hash`` is a seeded `Hasher` output (per process), so the tables keyed by it keep Swift's
/// resistance to chosen-collision floods; equal keys also compare both strings.
struct CallKey: Hashable, Sendable {
    let topic: String
    let callID: String
    /// Both strings' 64-bit hash (Swift's `Hasher`, seeded once per process): what the tables hash, and all the
    /// ``EndedCallMemory`` keeps of an ended call (34 bytes per call, 3.4 MB at the default 100 000 calls whatever the
    /// ids' length). Two keys share a hash with probability about 2⁻⁶⁴ each: an incoming call is wrongly taken for
    /// ended with probability about 100 000 × 2⁻⁶⁴ (5 × 10⁻¹⁵) when the memory is full.
    let hash: UInt64

    init(topic: String, callID: String) {
        self.topic = topic
        self.callID = callID
        var hasher = Hasher()
        hasher.combine(topic)
        hasher.combine(callID)
        hash = UInt64(bitPattern: Int64(hasher.finalize()))
    }

    static func == (lhs: CallKey, rhs: CallKey) -> Bool {
        lhs.hash == rhs.hash && lhs.callID == rhs.callID && lhs.topic == rhs.topic
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}
