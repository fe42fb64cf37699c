import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Kafka

/// `KafkaRangeReader` against librdkafka's mock cluster: exact ranges of several partitions at once, the end of the
/// log, stopping and replacing, a partition that does not exist, closing with the broker down, and the idle thread
/// going away and coming back.
@Suite struct KafkaRangeReaderTests {
    /// What one range handed over and how it ended.
    final class Recording: Sendable {
        private let state = Mutex<(values: [String], offsets: [Int64], outcome: KafkaRangeReader.Outcome?, finishes: Int)>(([], [], nil, 0))

        func each(stopAfter limit: Int = .max) -> @Sendable (KafkaRangeRecord) -> Bool {
            { [self] record in
                state.withLock { state in
                    guard state.offsets.count < limit else { return false }
                    state.values.append(String(decoding: record.value, as: UTF8.self))
                    state.offsets.append(record.offset)
                    return true
                }
            }
        }

        var finished: @Sendable (KafkaRangeReader.Outcome) -> Void {
            { [self] outcome in
                state.withLock { state in
                    state.outcome = outcome
                    state.finishes += 1
                }
            }
        }
        /// How often `finished` ran.
        var finishes: Int { state.withLock { $0.finishes } }
        var values: [String] { state.withLock { $0.values } }
        var offsets: [Int64] { state.withLock { $0.offsets } }
        var outcome: KafkaRangeReader.Outcome? { state.withLock { $0.outcome } }

        /// The outcome, once there is one (waits up to 20 s).
        func ended() async -> KafkaRangeReader.Outcome? {
            await Eventually.waitUntil(timeout: .seconds(20)) { outcome != nil }
            return outcome
        }
    }

    /// Holds the reader's thread inside a range's `each` at one record until the test lets it go, so what the test
    /// does meanwhile happens while that range is being read, whatever the load.
    final class ReaderHold: Sendable {
        private let reached = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)

        /// `each`, stopping the reader's thread at the record at `offset` until ``release()``.
        func each(at offset: Int64, then each: @escaping @Sendable (KafkaRangeRecord) -> Bool) -> @Sendable (KafkaRangeRecord) -> Bool {
            { [self] record in
                if record.offset == offset {
                    reached.signal()
                    proceed.wait()
                }
                return each(record)
            }
        }

        /// Returns once the reader's thread is held.
        func held() async { await Task.detached { [reached] in reached.wait() }.value }

        func release() { proceed.signal() }
    }

    static func reader(_ cluster: KafkaMockCluster, group: String, _ adjust: (inout KafkaRangeReaderConfiguration) -> Void = { _ in })
        -> KafkaRangeReader
    {
        var configuration = KafkaRangeReaderConfiguration(
            consumer: KafkaTestSupport.consumerConfiguration(cluster, group: group))
        adjust(&configuration)
        return KafkaRangeReader(configuration: configuration, logger: KafkaTestSupport.logger)
    }

    @Test func readsExactRangesOfSeveralPartitionsAtOnce() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 2)
        defer { cluster.close() }
        // Partition 0 holds "0", "2", "4", … at offsets 0, 1, 2, …; partition 1 holds "1", "3", ….
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 600, partitions: 2) == 0)
        let reader = Self.reader(cluster, group: group)
        defer { reader.close() }
        let first = Recording(), second = Recording()
        reader.read(KafkaTopicPartition(topic: topic, partition: 0), from: 50, to: 250, each: first.each(), finished: first.finished)
        reader.read(KafkaTopicPartition(topic: topic, partition: 1), from: 0, to: 300, each: second.each(), finished: second.finished)
        guard case .completed(let firstCount)? = await first.ended(), case .completed(let secondCount)? = await second.ended() else {
            Issue.record("ranges did not complete: \(String(describing: first.outcome)), \(String(describing: second.outcome))")
            return
        }
        #expect(firstCount == 200 && secondCount == 300)
        #expect(first.offsets == Array(50..<250))
        let firstValues: [String] = (50..<250).map { (offset: Int) in String(offset * 2) }
        let secondValues: [String] = (0..<300).map { (offset: Int) in String(offset * 2 + 1) }
        #expect(first.values == firstValues)
        #expect(second.values == secondValues)
        // The group was never joined: nothing was committed for it.
        let consumer = RecordingDelegate.completingImmediately()
        let check = try KafkaConsumer(topics: [topic], configuration: KafkaTestSupport.consumerConfiguration(cluster, group: group),
                                      delegate: consumer, logger: KafkaTestSupport.logger)
        #expect(await Eventually.waitUntil(timeout: .seconds(20)) { consumer.receivedCount == 600 })
        #expect(consumer.received.first { $0.partition == 0 }?.offset == 0)
        await check.close()
    }

    @Test func aRangePastTheLogEndsAtTheEndOfTheLog() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 1)
        defer { cluster.close() }
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 100, partitions: 1) == 0)
        let reader = Self.reader(cluster, group: group)
        defer { reader.close() }
        let range = Recording()
        reader.read(KafkaTopicPartition(topic: topic, partition: 0), from: 90, to: 1_000, each: range.each(), finished: range.finished)
        guard case .completed(let count)? = await range.ended() else {
            Issue.record("did not complete: \(String(describing: range.outcome))")
            return
        }
        #expect(count == 10 && range.offsets == Array(90..<100))
    }

    /// A range without an end reads to the high watermark its first fetch found, and ends there while the partition
    /// is still written to: its first record holds the reader's thread until 200 more records are in the log. (One
    /// batch of 100 records per fetch, and a prefetch of 5 messages: had librdkafka fetched up to the end of the log
    /// meanwhile, the end of the log would have ended the range there anyway.) The hold outlasts the stall timeout:
    /// time spent in `each` is not the broker's silence.
    @Test func aRangeToTheHighWatermarkEndsAtTheOneItsFirstFetchFound() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 1)
        defer { cluster.close() }
        for batch in 0..<3 {
            #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 100, partitions: 1, startingAt: batch * 100) == 0)
        }
        let reader = Self.reader(cluster, group: group) {
            $0.additionalProperties["max.partition.fetch.bytes"] = "1"
            $0.additionalProperties["queued.min.messages"] = "5"
            $0.stallTimeout = .seconds(3)
        }
        defer { reader.close() }
        let hold = ReaderHold(), range = Recording()
        reader.read(KafkaTopicPartition(topic: topic, partition: 0), from: 0, to: nil, each: hold.each(at: 0, then: range.each()),
                    finished: range.finished)
        await hold.held()
        let held = ContinuousClock.now
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 200, partitions: 1) == 0)
        try await Task.sleep(until: held + .seconds(3.5))
        hold.release()
        guard case .completed(300)? = await range.ended() else {
            Issue.record("did not complete with 300: \(String(describing: range.outcome))")
            return
        }
        #expect(range.offsets == Array(0..<300))
    }

    @Test func eachStopsARangeAndANewerRangeReplacesAnOlderOne() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 1)
        defer { cluster.close() }
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 1_200, partitions: 1) == 0)
        let reader = Self.reader(cluster, group: group)
        defer { reader.close() }
        let partition = KafkaTopicPartition(topic: topic, partition: 0)
        let stopped = Recording()
        reader.read(partition, from: 0, to: 300, each: stopped.each(stopAfter: 10), finished: stopped.finished)
        guard case .stopped? = await stopped.ended() else {
            Issue.record("not stopped: \(String(describing: stopped.outcome))")
            return
        }
        #expect(stopped.offsets == Array(0..<10))

        // A range being read when a newer one of its partition comes: its `each` holds the reader's thread at its
        // first record until the newer range is submitted, and it is longer than one turn of the reader (500 records),
        // so the reader takes the newer range before the older can end.
        let hold = ReaderHold(), older = Recording(), newer = Recording()
        reader.read(partition, from: 0, to: 1_200, each: hold.each(at: 0, then: older.each()), finished: older.finished)
        await hold.held()
        reader.read(partition, from: 1_100, to: 1_200, each: newer.each(), finished: newer.finished)
        hold.release()
        guard case .stopped? = await older.ended(), case .completed(100)? = await newer.ended() else {
            Issue.record("older \(String(describing: older.outcome)), newer \(String(describing: newer.outcome))")
            return
        }
        #expect(!older.offsets.isEmpty && older.offsets.count <= 500, "read in part: \(older.offsets.count)")
        #expect(newer.offsets == Array(1_100..<1_200))
    }

    /// Rebalance churn: many short ranges of three partitions in quick succession, most replacing one still being
    /// read. Every range ends exactly once, each completed one with exactly its records. (The reader's first version,
    /// over `rd_kafka_assign`, aborted the process in librdkafka 2.0.2 under such churn.)
    @Test func rangesInQuickSuccessionEachEndOnceWithTheirRecords() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 3)
        defer { cluster.close() }
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 900, partitions: 3) == 0)
        let reader = Self.reader(cluster, group: group)
        defer { reader.close() }
        var ranges: [(Recording, Range<Int64>)] = []
        for index in 0..<150 {
            let range = Recording()
            let from = Int64(index * 7 % 250)
            ranges.append((range, from..<(from + 50)))
            reader.read(KafkaTopicPartition(topic: topic, partition: Int32(index % 3)), from: from, to: from + 50,
                        each: range.each(), finished: range.finished)
            if index % 10 == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        var completed = 0
        for (index, (range, offsets)) in ranges.enumerated() {
            defer { #expect(range.finishes == 1, "range \(index)") }
            switch await range.ended() {
            case .completed(let count)?:
                completed += 1
                #expect(count == 50 && range.offsets == Array(offsets), "range \(index)")
            case .stopped?:
                break
            case let other:
                Issue.record("range \(index): \(String(describing: other))")
            }
        }
        #expect(completed >= 3, "the last range of each partition completes")
    }

    /// Ranges beyond `maxConcurrentRanges` wait their turn and are read like the others.
    @Test func rangesBeyondTheConcurrencyLimitWaitTheirTurn() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 6)
        defer { cluster.close() }
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 1_200, partitions: 6) == 0)
        let reader = Self.reader(cluster, group: group) { $0.maxConcurrentRanges = 2 }
        defer { reader.close() }
        let ranges = (0..<6).map { _ in Recording() }
        // The first range holds the reader's thread at its first record until the other five are submitted, so they
        // arrive together whatever the load, and the reader must queue all but one of them.
        let hold = ReaderHold()
        for (partition, range) in ranges.enumerated() {
            let each = partition == 0 ? hold.each(at: 10, then: range.each()) : range.each()
            reader.read(KafkaTopicPartition(topic: topic, partition: Int32(partition)), from: 10, to: 200, each: each,
                        finished: range.finished)
            if partition == 0 { await hold.held() }
        }
        hold.release()
        for (partition, range) in ranges.enumerated() {
            guard case .completed(190)? = await range.ended() else {
                Issue.record("partition \(partition): \(String(describing: range.outcome))")
                continue
            }
            #expect(range.values == (10..<200).map { String($0 * 6 + partition) })
        }
        #expect(reader.mostRangesAtOnce == 2)
    }

    /// A range longer than the prefetch (2 000 messages a partition) wakes librdkafka's fetcher each time it drains
    /// half of it: without that, librdkafka 2.0.2 fetched the next 2 000 up to a second later (a 20 000-record
    /// backlog took 2–3 s to read, and 50 ms with the wake-ups, in a debug build).
    @Test func aLongRangeWakesTheFetcherAsItDrainsThePrefetch() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 1)
        defer { cluster.close() }
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 20_000, partitions: 1) == 0)
        let reader = Self.reader(cluster, group: group)
        defer { reader.close() }
        let range = Recording()
        reader.read(KafkaTopicPartition(topic: topic, partition: 0), from: 0, to: 20_000, each: range.each(), finished: range.finished)
        guard case .completed(20_000)? = await range.ended() else {
            Issue.record("\(String(describing: range.outcome))")
            return
        }
        #expect(reader.fetcherWakeUps >= 2, "about one per prefetch drained: \(reader.fetcherWakeUps)")
    }

    @Test func aMissingPartitionFails() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 1)
        defer { cluster.close() }
        let reader = Self.reader(cluster, group: group) { $0.stallTimeout = .seconds(1) }
        defer { reader.close() }
        let missing = Recording()
        reader.read(KafkaTopicPartition(topic: topic, partition: 7), from: 0, to: 10, each: missing.each(), finished: missing.finished)
        guard case .failed? = await missing.ended() else {
            Issue.record("missing partition: \(String(describing: missing.outcome))")
            return
        }
    }

    @Test func closingFailsTheOpenRangesAndEveryLaterOne() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 1)
        defer { cluster.close() }
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 10, partitions: 1) == 0)
        // The broker is down: the range gets nothing and waits (its stall timeout far off) until the reader closes.
        try ChildProcess.withNoneStarting { () throws(KafkaError) in try cluster.setBrokerDown(1) }
        let reader = Self.reader(cluster, group: group) { $0.stallTimeout = .seconds(120) }
        let waiting = Recording()
        reader.read(KafkaTopicPartition(topic: topic, partition: 0), from: 0, to: 10, each: waiting.each(), finished: waiting.finished)
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { reader.mostRangesAtOnce == 1 }, "the reader started the range")
        // Asserting absence (nothing ends the range while the broker is down): a bounded wait.
        try await Task.sleep(for: .milliseconds(300))
        #expect(waiting.outcome == nil)
        reader.close()
        guard case .failed(let error)? = waiting.outcome, error.code == .closed else {
            Issue.record("open range at close: \(String(describing: waiting.outcome))")
            return
        }
        let late = Recording()
        reader.read(KafkaTopicPartition(topic: topic, partition: 0), from: 0, to: 10, each: late.each(), finished: late.finished)
        guard case .failed(let lateError)? = late.outcome, lateError.code == .closed else {
            Issue.record("range after close: \(String(describing: late.outcome))")
            return
        }
    }

    @Test func anIdleReaderStopsItsThreadAndStartsItAgain() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 1)
        defer { cluster.close() }
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 20, partitions: 1) == 0)
        let reader = Self.reader(cluster, group: group) { $0.idleTimeout = .seconds(2) }
        defer { reader.close() }
        let partition = KafkaTopicPartition(topic: topic, partition: 0)
        for round in 0..<2 {
            #expect(!reader.hasThread, "round \(round)")
            let range = Recording()
            reader.read(partition, from: 0, to: 20, each: range.each(), finished: range.finished)
            // `read` starts the thread before it returns (and it idles 2 s after the range before it stops).
            #expect(reader.hasThread, "round \(round)")
            guard case .completed(20)? = await range.ended() else {
                Issue.record("round \(round): \(String(describing: range.outcome))")
                return
            }
            #expect(await Eventually.waitUntil(timeout: .seconds(20)) { !reader.hasThread }, "round \(round)")
        }
    }
}
