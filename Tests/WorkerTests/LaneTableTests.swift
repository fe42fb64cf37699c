import Testing

@testable import Worker

/// The read-ahead's per-lane table behaves as a dictionary keyed by partition number would.
@Suite struct LaneTableTests {
    @Test func valuesByLaneAgainstADictionary() {
        var table = LaneTable<[Int]>()
        var reference: [Int32: [Int]] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<2000 {
            let lane = Int32.random(in: 0..<40, using: &generator)
            switch step % 4 {
            case 0, 1:
                reference[lane, default: []].append(step)
                #expect(table.append(step, toLane: lane) == reference[lane]!.count)
            case 2:
                #expect(table.removeValue(forLane: lane) == reference.removeValue(forKey: lane))
            default:
                table[lane]?.append(-step)
                reference[lane]?.append(-step)
            }
            #expect(table[lane] == reference[lane])
        }
        #expect(table.lanes == reference.keys.sorted())
        #expect(Array(table.values) == reference.keys.sorted().map { reference[$0]! })
        table.removeAll()
        #expect(table.lanes.isEmpty)
    }

    @Test func aNegativeLaneHoldsNothing() {
        var table = LaneTable<Int>()
        table[-1] = 5
        var arrays = LaneTable<[Int]>()
        #expect(arrays.append(1, toLane: -2) == 0)
        #expect(arrays[-2] == nil)
        #expect(arrays.lanes.isEmpty)
        #expect(table[-1] == nil)
        #expect(table.removeValue(forLane: -1) == nil)
        #expect(table.lanes.isEmpty)
    }
}
