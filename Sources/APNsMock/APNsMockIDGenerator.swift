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
            /// Hex digits `nibbles` of `word`, counted from the most significant, then a dash unless last.
            func put(_ word: UInt64, _ nibbles: Range<Int>) {
                for nibble in nibbles {
                    buffer[position] = digits.utf8Start[Int((word >> UInt64(60 - 4 * nibble)) & 0xF)]
                    position += 1
                }
                if position < 36 {
                    buffer[position] = UInt8(ascii: "-")
                    position += 1
                }
            }
            put(high, 0..<8)
            put(high, 8..<12)
            put(high, 12..<16)
            put(low, 0..<4)
            put(low, 4..<16)
            return position
        }
    }
}
