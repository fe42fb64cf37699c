import Foundation
import Kafka
import Synchronization
import Telemetry
import Worker

/// `callpush produce`: JSON lines → the calls topic, validated first; or a replay of the dead-letter topic.
struct ProduceCommand: Command {
    let name = "produce"
    let summary = "produce call events (JSON lines) to Kafka, or replay dead-lettered events"
    let usage = """
        Usage: callpush produce --brokers HOST:PORT[,…] [--file FILE] [options]
               callpush produce --brokers HOST:PORT[,…] --from-dlq [options]

        Reads one event per line (docs/integration.md; docs/call-event.schema.json), validates each with the
        worker's own decoder, and produces the valid ones to the calls topic keyed by call id. Invalid lines are reported as
        'line N: reason' on stderr and not sent. Ends with a count of produced and failed events; exits 1 if any
        failed. With --from-dlq it consumes the dead-letter topic (as consumer group --group, so a replay resumes
        where it stopped) and re-produces each event to the calls topic, stopping once the topic has been idle for
        --idle-exit seconds. --kafka-properties (or CALLPUSH_KAFKA_PROPERTIES, which keeps secrets out of the
        process list) passes librdkafka settings such as SASL/TLS to both the producer and the replay's consumer, as
        'callpush run' takes them.
        """
    let examples = [
        "callpush produce --brokers 127.0.0.1:9092 --file events.jsonl",
        "cat events.jsonl | callpush produce --brokers 127.0.0.1:9092",
        "callpush produce --brokers 127.0.0.1:9092 --from-dlq --idle-exit 10",
        "CALLPUSH_KAFKA_PROPERTIES='security.protocol=SASL_SSL;sasl.mechanisms=PLAIN;sasl.username=u;sasl.password=…' \\\n"
            + "      callpush produce --brokers kafka:9093 --file events.jsonl",
    ]
    let options = [
        OptionSpec("brokers", .string, "Kafka bootstrap servers (required)"),
        OptionSpec("topic", .string, default: "calls", "topic to produce to"),
        OptionSpec("file", .string, default: "-", "JSON-lines file to read; - reads stdin"),
        OptionSpec("from-dlq", .boolean, "replay the dead-letter topic instead of reading lines"),
        OptionSpec("dlq-topic", .string, default: "calls.dlq", "dead-letter topic to replay"),
        OptionSpec("group", .string, default: "callpush-dlq-replay", "consumer group of the replay"),
        OptionSpec("idle-exit", .number(0.5...3600), default: "5", "replay: stop after this many idle seconds"),
        KafkaPropertiesOption.spec,
    ]

    func run(_ options: ParsedOptions) async -> Int32 {
        guard let brokers = options.string("brokers"), !brokers.isEmpty else {
            CommandLineTool.printError("--brokers is required; see 'callpush produce --help'")
            return ExitStatus.usage
        }
        let properties: [String: String]
        switch KafkaPropertiesOption.parse(options.defaulted("kafka.properties")) {
        case .success(let value): properties = value
        case .failure(let failure):
            for problem in failure.problems { CommandLineTool.printError(problem) }
            return ExitStatus.usage
        }
        var configuration = KafkaProducerConfiguration()
        configuration.bootstrapServers = brokers
        configuration.clientID = "callpush-produce"
        configuration.messageTimeout = .seconds(30)
        configuration.additionalProperties = properties
        let producer: KafkaProducer
        do {
            producer = try KafkaProducer(configuration: configuration, logger: Logger(label: "produce", level: .error, sink: FileDescriptorLogSink(fileDescriptor: 2)))
        } catch {
            CommandLineTool.printError("cannot create a Kafka producer: \(error)")
            return ExitStatus.failure
        }
        let topic = options.defaulted("topic")
        // A warm-up only (the first record is not held for librdkafka to learn of the topic): each record's own
        // delivery report carries any error.
        _ = try? producer.prepare(topics: [topic], timeout: .seconds(5))
        let tally = ProduceTally()
        if options.boolean("from-dlq") {
            await replayDeadLetters(options, brokers: brokers, properties: properties, producer: producer, topic: topic, tally: tally)
        } else {
            guard let input = openInput(options.defaulted("file")) else {
                await producer.close()
                return ExitStatus.failure
            }
            await produceLines(from: input, producer: producer, topic: topic, tally: tally)
        }
        _ = await producer.flush(timeout: .seconds(30))
        await producer.close()
        let (produced, failed) = tally.snapshot
        Output.progress("")
        Output.line("produced \(produced), failed \(failed)")
        return failed == 0 ? ExitStatus.success : ExitStatus.failure
    }

    private func openInput(_ path: String) -> FileHandle? {
        if path == "-" { return FileHandle.standardInput }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            CommandLineTool.printError("cannot read \(path)")
            return nil
        }
        return handle
    }

    private func produceLines(from input: FileHandle, producer: KafkaProducer, topic: String, tally: ProduceTally) async {
        let decoder = CallEventDecoder()
        var lineNumber = 0
        var lastProgress = ContinuousClock.now
        for line in LineReader(input) {
            lineNumber += 1
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) { continue }
            let event: CallEvent
            do throws(EventDecodingError) {
                event = try decoder.decode(line)
            } catch {
                CommandLineTool.printError("line \(lineNumber): \(error.code.rawValue): \(error.message)")
                tally.fail()
                continue
            }
            await send(KafkaProducerRecord(topic: topic, key: Array(event.callID.utf8), value: line), producer, tally)
            if ContinuousClock.now - lastProgress > .seconds(1) {
                lastProgress = ContinuousClock.now
                let (produced, failed) = tally.snapshot
                Output.progress("lines \(lineNumber), produced \(produced), failed \(failed)")
            }
        }
    }

    /// Enqueues a record, backing off while librdkafka's local queue is full.
    private func send(_ record: KafkaProducerRecord, _ producer: KafkaProducer, _ tally: ProduceTally, then: (@Sendable () -> Void)? = nil) async {
        while true {
            do {
                try producer.produce(record) { result in
                    switch result {
                    case .success: tally.succeed()
                    case .failure(let error):
                        CommandLineTool.printError("delivery to \(record.topic) failed: \(error)")
                        tally.fail()
                    }
                    then?()
                }
                return
            } catch where error.code == .queueFull {
                try? await Task.sleep(for: .milliseconds(20))
            } catch {
                CommandLineTool.printError("cannot produce to \(record.topic): \(error)")
                tally.fail()
                return
            }
        }
    }

    private func replayDeadLetters(
        _ options: ParsedOptions, brokers: String, properties: [String: String], producer: KafkaProducer, topic: String,
        tally: ProduceTally
    ) async {
        var configuration = KafkaConsumerConfiguration()
        configuration.bootstrapServers = brokers
        configuration.additionalProperties = properties
        configuration.groupID = options.defaulted("group")
        configuration.clientID = "callpush-dlq-replay"
        configuration.sessionTimeout = .seconds(6)
        configuration.statisticsInterval = .zero
        let replayer = DeadLetterReplayer(producer: producer, topic: topic, tally: tally, send: send)
        let consumer: KafkaConsumer
        do {
            consumer = try KafkaConsumer(
                topics: [options.defaulted("dlq-topic")], configuration: configuration, delegate: replayer,
                logger: Logger(label: "replay", level: .error, sink: FileDescriptorLogSink(fileDescriptor: 2))
            )
        } catch {
            CommandLineTool.printError("cannot consume the dead-letter topic: \(error)")
            tally.fail()
            return
        }
        let idle = Duration.milliseconds(Int(options.defaultedNumber("idle-exit") * 1000))
        let joinDeadline = ContinuousClock.now + .seconds(60)
        while true {
            if let last = replayer.lastActivity {
                if ContinuousClock.now - last >= idle && consumer.inFlightCount == 0 { break }
            } else if ContinuousClock.now > joinDeadline {
                CommandLineTool.printError("no partition of the dead-letter topic was assigned within 60 s")
                tally.fail()
                break
            }
            try? await Task.sleep(for: .milliseconds(100))
            let (produced, failed) = tally.snapshot
            Output.progress("replayed \(produced), failed \(failed)")
        }
        await consumer.close()
    }
}

