import Synchronization

/// Random (version 4) UUID strings for generated `apns-id`s and `apns-unique-id`s, without a system call or a lock
/// per id: SplitMix64 outputs drawn by index from an atomic counter, seeded once from the system generator.
/// Not for secrets; unique within a process and unpredictable enough for a mock.
final class APNsMockIDGenerator: Sendable {
    private let seed: UInt64
    private let counter = Atomic<UInt64>(0)

    init() {
        var system = SystemRandomNumberGenerator()
        seed = system.next()
    }

    /// A new UUID in the canonical 8-4-4-4-12 form.
    func next(uppercase: Bool) -> String {
        let index = counter.wrappingAdd(2, ordering: .relaxed).oldValue
        var high = APNsMockRandom.mix(seed &+ (index &+ 1) &* APNsMockRandom.increment)
        var low = APNsMockRandom.mix(seed &+ (index &+ 2) &* APNsMockRandom.increment)
        high = (high & ~0xF000) | 0x4000  // version 4
        low = (low & ~(0xC << 60)) | (0x8 << 60)  // variant 10xx
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var position = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    buffer[position] = UInt8(ascii: "-")
                    position += 1
                }
                let word = nibble < 16 ? high : low
                let shift = UInt64(60 - 4 * (nibble % 16))
                buffer[position] = digits.utf8Start[Int((word >> shift) & 0xF)]
                position += 1
            }
            return position
        }
    }
}
