/// One counter per case of a small enum, found without hashing: the counters in `allCases` order, picked by a scan of
/// the cases. (A dictionary keyed by an enum with raw values hashes the case's raw string at every lookup, on the
/// worker's hot path.)
package struct CaseCounters<Key: CaseIterable & Equatable & Sendable>: Sendable {
    private let keys: [Key]
    private let counters: [Counter]

    /// Makes each case's counter with `make`.
    package init(_ make: (Key) -> Counter) {
        keys = Array(Key.allCases)
        counters = keys.map(make)
    }

    /// The counter of `key`.
    package subscript(key: Key) -> Counter {
        var index = 0
        while keys[index] != key { index += 1 }
        return counters[index]
    }
}
