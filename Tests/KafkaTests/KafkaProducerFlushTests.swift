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

        let records = 5000
        let completions = Mutex<[UInt: Int]>([:])
        var ids: [UInt] = []
        for index in 0..<records {
            let record = KafkaProducerRecord(topic: topic, partition: Int32(index % 4), value: Array(String(index).utf8))
            ids.append(try producer.produce(record) { result in
                guard case .success(let report) = result else { return }
                completions.withLock { $0[report.id, default: 0] += 1 }
            })
        }
        #expect(await producer.flush(timeout: .seconds(30)))
        let seen = completions.withLock { $0 }
        #expect(seen.count == records)
        #expect(seen.values.allSatisfy { $0 == 1 })
        #expect(Set(seen.keys) == Set(ids))
        #expect(producer.outstandingCount == 0)
        await producer.close()
    }

    /// More records outstanding than the producer has report slots (16 384): while the broker is down none is reported,
    /// so the later ids find their slots taken and their reports an object of their own. Each completion still runs
    /// exactly once, with its record's id.
    @Test func recordsBeyondTheReportSlotsAreReportedOnceEach() async throws {
        let (cluster, topic, producer) = try KafkaTestSupport.producerCluster(partitions: 2)
        defer { cluster.close() }
        _ = try await producer.send(KafkaProducerRecord(topic: topic, value: [0]))
        try ChildProcess.withNoneStarting { () throws(KafkaError) in try cluster.setBrokerDown(1) }
        let records = 20_000
        let completions = Mutex<[UInt: Int]>([:])
        var ids: [UInt] = []
        for index in 0..<records {
            let record = KafkaProducerRecord(topic: topic, partition: Int32(index % 2), value: Array(String(index).utf8))
            ids.append(try producer.produce(record) { result in
                guard case .success(let report) = result else { return }
                completions.withLock { $0[report.id, default: 0] += 1 }
            })
        }
        #expect(producer.outstandingCount == records)
        try cluster.setBrokerUp(1)
        #expect(await producer.flush(timeout: .seconds(60)))
        let seen = completions.withLock { $0 }
        #expect(seen.count == records)
        #expect(seen.values.allSatisfy { $0 == 1 })
        #expect(Set(seen.keys) == Set(ids))
        await producer.close()
    }

    /// While records cannot be delivered `flush` gives up at its timeout; once they are, it returns `true`.
    @Test func flushTimesOutWhileTheBrokerIsDown() async throws {
        let (cluster, topic, producer) = try KafkaTestSupport.producerCluster(partitions: 1)
        defer { cluster.close() }
        _ = try await producer.send(KafkaProducerRecord(topic: topic, value: [0]))
        try ChildProcess.withNoneStarting { () throws(KafkaError) in try cluster.setBrokerDown(1) }
        let delivered = Tally()
        for index in 0..<10 {
            try producer.produce(KafkaProducerRecord(topic: topic, value: [UInt8(index)])) { result in
                if case .success = result { delivered.add() }
            }
        }
        let start = ContinuousClock.now
        #expect(await producer.flush(timeout: .milliseconds(300)) == false)
        // Well before the records' 20 s message timeout; not tighter: the flush's timer fires on time, but this task
        // resumes only when Swift Testing's 2-thread cooperative pool has a thread (6.4 s seen in a full parallel run).
        #expect(ContinuousClock.now - start < .seconds(15))
        #expect(producer.outstandingCount == 10)
        try cluster.setBrokerUp(1)
        #expect(await producer.flush(timeout: .seconds(20)))
        #expect(delivered.value == 10)
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
