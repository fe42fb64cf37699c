import Synchronization

/// Random (version 4) UUIDs for generated `apns-id`s and `apns-unique-id`s, without a system call or a lock per id:
/// SplitMix64 outputs drawn by index from an atomic counter, seeded once from the system generator. Not for secrets;
/// unique within a process and unpredictable enough for a mock. The embedded pipeline's traffic generator draws its
/// event ids here too.
package final class APNsMockIDGenerator: Sendable {
    private let seed: UInt64
    private let counter = Atomic<UInt64>(0)

    package init() {
        var system = SystemRandomNumberGenerator()
        seed = system.next()
    }

    /// A new UUID, written with uppercase or lowercase hex digits.
    package func next(uppercase: Bool) -> APNsMockUUID {
        let index = counter.wrappingAdd(2, ordering: .relaxed).oldValue
        var high = APNsMockRandom.mix(seed &+ (index &+ 1) &* APNsMockRandom.increment)
        var low = APNsMockRandom.mix(seed &+ (index &+ 2) &* APNsMockRandom.increment)
        high = (high & ~0xF000) | 0x4000  // version 4
        low = (low & ~(0xC << 60)) | (0x8 << 60)  // variant 10xx
        return APNsMockUUID(high: high, low: low, uppercase: uppercase)
    }
}
