import Foundation
import Synchronization
import Telemetry
import TestSupport
import Testing

@testable import Kafka

@Suite(.timeLimit(.minutes(2))) struct KafkaProducerFlushTests {
    /// `flush` returns `true` once every record's completion has run, each exactly once.
    @Test func flushReturnsOnceEveryCompletionHasRun() async throws {
        let (cluster, topic, producer) = try KafkaTestSupport.producerCluster(partitions: 4)
        defer { cluster.close() }
        #expect(await producer.flush(timeout: .seconds(1)), "nothing outstanding")

        let records = ReportedRecords()
        try records.produce(5000, partitions: 4, topic: topic, with: producer)
        #expect(await producer.flush(timeout: .seconds(30)))
        records.expectEachReportedOnce()
        #expect(producer.outstandingCount == 0)
        await producer.close()
    }

    /// While records cannot be delivered `flush` gives up at its timeout; once they are, it returns `true`. More records
    /// wait meanwhile than the producer has report slots (made small here: 1 024 and 4 096 spare ones), so later ids
    /// find their slot taken and take a spare one, and later ones find both taken and take an object of their own:
    /// each completion still runs exactly once, with its record's id.
    @Test func flushTimesOutWhileTheBrokerIsDown() async throws {
        let (cluster, topic, producer) = try KafkaTestSupport.producerCluster(partitions: 2, reportSlots: (1024, 4096))
        defer { cluster.close() }
        _ = try await producer.send(KafkaProducerRecord(topic: topic, value: [0]))
        try ChildProcess.withNoneStarting { () throws(KafkaError) in try cluster.setBrokerDown(1) }
        let records = ReportedRecords()
        try records.produce(20_000, partitions: 2, topic: topic, with: producer)
        let start = ContinuousClock.now
        #expect(await producer.flush(timeout: .milliseconds(300)) == false)
        // Well before the records' 20 s message timeout; not tighter: the flush's timer fires on time, but this task
        // resumes only when Swift Testing's 2-thread cooperative pool has a thread (6.4 s seen in a full parallel run).
        #expect(ContinuousClock.now - start < .seconds(15))
        #expect(producer.outstandingCount == 20_000)
        try cluster.setBrokerUp(1)
        #expect(await producer.flush(timeout: .seconds(20)))
        records.expectEachReportedOnce()
        await producer.close()
    }

    /// Records produced from several threads until the producer, closing meanwhile, refuses them: each accepted one is
    /// reported exactly once, and `close` returns only after every record it accepted was reported.
    @Test func recordsProducedWhileClosingAreRefusedOrReportedOnce() async throws {
        let (cluster, topic, producer) = try KafkaTestSupport.producerCluster(partitions: 2)
        defer { cluster.close() }
        _ = try await producer.send(KafkaProducerRecord(topic: topic, value: [0]))
        let producers = 3
        let reports = Mutex<[UInt: Int]>([:])
        let accepted = Tally(), refused = Tally(), otherErrors = Tally()
        let finished = DispatchGroup()
        for thread in 0..<producers {
            finished.enter()
            Thread {
                defer { finished.leave() }
                for index in 0..<5_000_000 {
                    let record = KafkaProducerRecord(topic: topic, partition: Int32(index % 2), value: [UInt8(thread)])
                    do throws(KafkaError) {
                        try producer.produce(record) { result in
                            reports.withLock { $0[(try? result.get())?.id ?? 0, default: 0] += 1 }
                        }
                        accepted.add()
                    } catch where error.code == KafkaError.closed().code {
                        refused.add()
                        return
                    } catch where error.code == .queueFull {
                        continue
                    } catch {
                        otherErrors.add()
                    }
                }
            }.start()
        }
        try await Task.sleep(for: .milliseconds(50))
        await producer.close()
        let reportedAtClose = reports.withLock { $0.values.reduce(0, +) }
        finished.wait()
        let seen = reports.withLock { $0 }
        #expect(otherErrors.value == 0)
        #expect(refused.value == producers, "every thread produced until the close refused it")
        #expect(seen[0] == nil, "every report is a delivery")
        #expect(seen.values.allSatisfy { $0 == 1 })
        #expect(seen.count == accepted.value)
        #expect(reportedAtClose == seen.count, "no report after close returned")
    }
}

/// Records produced with a completion that counts each successful report by its id.
private final class ReportedRecords: Sendable {
    private let reports = Mutex<[UInt: Int]>([:])
    private let ids = Mutex<[UInt]>([])

    /// Produces `count` records round-robin over `partitions` partitions of `topic`.
    func produce(_ count: Int, partitions: Int32, topic: String, with producer: KafkaProducer) throws(KafkaError) {
        for index in 0..<count {
            let record = KafkaProducerRecord(
                topic: topic, partition: Int32(index) % partitions, value: Array(String(index).utf8))
            let id = try producer.produce(record) { result in
                guard case .success(let report) = result else { return }
                self.reports.withLock { $0[report.id, default: 0] += 1 }
            }
            ids.withLock { $0.append(id) }
        }
    }

    /// Every record produced was reported delivered exactly once, under its own id.
    func expectEachReportedOnce() {
        let seen = reports.withLock { $0 }
        let produced = ids.withLock { $0 }
        #expect(seen.count == produced.count)
        #expect(seen.values.allSatisfy { $0 == 1 })
        #expect(Set(seen.keys) == Set(produced))
    }
}
