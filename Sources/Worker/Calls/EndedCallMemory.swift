/// The worker's memory of recently ended calls: a least-recently-marked set of call-id hashes, bounded by count
/// (``capacity``) and by age (``retentionMilliseconds``), in memory allocated once and never grown or copied.
///
/// Rules: docs/call-handling.md, section "Ended-call memory (EndedCallMemory)".
///
/// Not thread-safe: ``CallTracker`` keeps it behind its lock.
struct EndedCallMemory {
    /// The most calls one memory can hold (node numbers are 32-bit, and the index holds twice as many slots).
    static let maximumCapacity = 1 << 28

    /// One remembered call, linked into the list in marking order.
    private struct Node {
        var key: UInt64
        /// Wall-clock milliseconds of the last marking.
        var endedAt: Int64
        /// The node marked just before this one, or ``noNode``.
        var older: Int32
        /// The node marked just after this one, or ``noNode`` (in a free node: the next free node).
        var newer: Int32
    }

    private static let noNode: Int32 = -1

    /// How many calls are remembered at most: the configured capacity, clamped to `0...maximumCapacity`.
    let capacity: Int
    /// How long a call is remembered after its last marking.
    let retentionMilliseconds: Int64

    /// Node storage: ``capacity`` nodes from the first remembered call on.
    private var nodes: [Node] = []
    /// Nodes from this one on have never been used.
    private var unusedNodes = 0
    /// Index slots: a node number, or ``noNode`` when empty. Empty (not allocated) until the first call is remembered.
    private var slots: [Int32] = []
    private var slotMask = 0
    private var oldest = Self.noNode
    private var newest = Self.noNode
    /// Released node numbers, linked through ``Node/newer``.
    private var freeNodes = Self.noNode
    /// How many calls are remembered (some may be past their retention until ``forgetExpired(at:)`` runs).
    private(set) var count = 0

    init(capacity: Int, retention: Duration) {
        self.capacity = min(max(0, capacity), Self.maximumCapacity)
        self.retentionMilliseconds = retention.inMilliseconds
    }

    /// Bytes the memory holds once it has remembered a call: the nodes and the index (0 before).
    var allocatedBytes: Int {
        nodes.count * MemoryLayout<Node>.stride + slots.count * MemoryLayout<Int32>.stride
    }

    /// How far back the memory reaches at `now`, in milliseconds: the retention while it has room, the age of its
    /// oldest call once ``capacity`` pushes calls out before their retention ends (0 with no capacity). A retried or
    /// replayed incoming call whose hang-up is older than this is not known to have ended.
    func reachMilliseconds(at now: Int64) -> Int64 {
        guard capacity > 0 else { return 0 }
        guard count == capacity, oldest != Self.noNode else { return retentionMilliseconds }
        return min(retentionMilliseconds, max(0, now - nodes[Int(oldest)].endedAt))
    }

    /// Whether `key` is remembered and was marked less than the retention before `now`.
    func contains(_ key: UInt64, at now: Int64) -> Bool {
        guard let (_, node) = find(key) else { return false }
        return now - nodes[Int(node)].endedAt < retentionMilliseconds
    }

    /// Remembers `key` as ended at `now`: a new entry (pushing out the oldest when ``capacity`` are remembered), or a
    /// refresh of the one remembered.
    mutating func remember(_ key: UInt64, at now: Int64) {
        guard capacity > 0 else { return }
        if slots.isEmpty { allocate() }
        if let (_, node) = find(key) {
            unlink(node)
            nodes[Int(node)].endedAt = now
            linkNewest(node)
            return
        }
        if count == capacity { removeOldest() }
        let node: Int32
        if freeNodes != Self.noNode {
            node = freeNodes
            freeNodes = nodes[Int(node)].newer
        } else {
            node = Int32(unusedNodes)
            unusedNodes += 1
        }
        nodes[Int(node)] = Node(key: key, endedAt: now, older: Self.noNode, newer: Self.noNode)
        var slot = home(key)
        while slots[slot] != Self.noNode { slot = (slot + 1) & slotMask }
        slots[slot] = node
        linkNewest(node)
        count += 1
    }

    /// Forgets, oldest first, the calls marked at least the retention before `now`; stops at the first current one.
    mutating func forgetExpired(at now: Int64) {
        while oldest != Self.noNode && now - nodes[Int(oldest)].endedAt >= retentionMilliseconds { removeOldest() }
    }

    // MARK: - Storage

    /// A slab of ``capacity`` nodes `(key, endedAt, older, newer)` of 24 bytes, linked oldest → newest (so a refresh
    /// moves a node to the newest end in O(1) and the oldest is dropped first), and an open-addressing index (linear
    /// probing, a power-of-two table of at least twice ``capacity`` slots, so at most half full) of 4-byte node
    /// numbers, emptied by backward-shift deletion (no tombstones, no rebuilds). At the default 100 000 calls that is
    /// 2.4 MB of nodes and 1 MB of index, about half what a `Dictionary` and an order array take, and never resized
    /// (a doubling holds the old and the new storage at once, which showed as steps in the soak's RSS).
    ///
    /// Allocated in full when the first call is remembered: an idle worker holds none of it, and from then on the
    /// memory's share of RSS is the same however full it is (allocated at start it would put the idle worker over its
    /// memory bound; filled page by page it would make RSS climb through a soak). Nodes never used are taken in
    /// order, then released ones through a free list.
    private mutating func allocate() {
        var tableSize = 2
        while tableSize < 2 * capacity { tableSize <<= 1 }
        slots = Array(repeating: Self.noNode, count: tableSize)
        slotMask = tableSize - 1
        nodes = Array(repeating: Node(key: 0, endedAt: 0, older: Self.noNode, newer: Self.noNode), count: capacity)
    }

    /// The key's low bits: keys must be well mixed (``CallKey/hash``, a `Hasher` output, is).
    private func home(_ key: UInt64) -> Int { Int(truncatingIfNeeded: key) & slotMask }

    /// The index slot and node of `key`, if remembered.
    private func find(_ key: UInt64) -> (slot: Int, node: Int32)? {
        guard !slots.isEmpty else { return nil }
        var slot = home(key)
        while true {
            let node = slots[slot]
            if node == Self.noNode { return nil }
            if nodes[Int(node)].key == key { return (slot, node) }
            slot = (slot + 1) & slotMask
        }
    }

    private mutating func removeOldest() {
        let node = oldest
        guard node != Self.noNode, let (slot, _) = find(nodes[Int(node)].key) else { return }
        removeSlot(slot)
        unlink(node)
        nodes[Int(node)].newer = freeNodes
        freeNodes = node
        count -= 1
    }

    /// Empties `slot` and moves later entries of its probe run back so every entry stays reachable from its home.
    private mutating func removeSlot(_ slot: Int) {
        var hole = slot
        var next = slot
        while true {
            next = (next + 1) & slotMask
            let node = slots[next]
            if node == Self.noNode { break }
            // The entry may fill the hole if its home is not cyclically after the hole (within hole+1…next).
            let fromHome = (next - home(nodes[Int(node)].key)) & slotMask
            if fromHome >= (next - hole) & slotMask {
                slots[hole] = node
                hole = next
            }
        }
        slots[hole] = Self.noNode
    }

    // MARK: - Marking order

    private mutating func unlink(_ node: Int32) {
        let older = nodes[Int(node)].older
        let newer = nodes[Int(node)].newer
        if older != Self.noNode { nodes[Int(older)].newer = newer } else { oldest = newer }
        if newer != Self.noNode { nodes[Int(newer)].older = older } else { newest = older }
    }

    private mutating func linkNewest(_ node: Int32) {
        nodes[Int(node)].older = newest
        nodes[Int(node)].newer = Self.noNode
        if newest != Self.noNode { nodes[Int(newest)].newer = node } else { oldest = node }
        newest = node
    }
}
