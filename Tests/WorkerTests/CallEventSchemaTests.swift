import Foundation
import TestSupport
import Testing
@testable import Worker

/// The published JSON Schema of the call event (`docs/call-event.schema.json`) and the decoder agree: an
/// independent validator (Python's `jsonschema`, through `scripts/check-call-events.py`) judges a corpus of events,
/// each one the valid example with one or more properties replaced, and the decoder must accept exactly the events
/// the schema accepts and dead-letter each other one with the reason the schema names for it.
@Suite struct CallEventSchemaTests {
    /// The valid example, as (property, JSON text) in a fixed order.
    static let example: [(String, String)] = [
        ("event_id", #""8d7f3c2e-1b4a-4f6e-9a0b-7c6d5e4f3a2b""#), ("type", #""incoming""#), ("call_id", #""c-42""#),
        ("device_token", "\"\(Fixtures.token)\""), ("push", #""alert""#), ("topic", #""com.example.app""#),
        ("environment", #""production""#), ("created_at", "1764489600123"), ("ring_timeout_s", "30"),
        ("caller", #"{"name":"Alice","id":"u-7"}"#), ("alert", #"{"title":"T","subtitle":"S","body":"B"}"#),
        ("category", #""INCOMING_CALL""#), ("sound", "null"), ("custom", #"{"room":"r-9"}"#),
    ]

    /// Values tried in every property (nil: the property is left out).
    static let palette: [String?] = [
        nil, "null", "true", "false", "0", "1", "-1", "30", "600", "601", "1.5", "3e1", "-0.0", "1e20", "-1e20",
        "1764489600123", "1.764489600123e12", "253402300799999", "253402300800000", "12345678901234567890",
        #""""#, #""x""#, #""incoming""#, #""hangup""#, #""missed""#, #""answered_elsewhere""#, #""Incoming""#,
        #""voip""#, #""alert""#, #""sandbox""#, #""production""#, #""staging""#, "\"\(Fixtures.token)\"",
        "\"\(Fixtures.token.uppercased())\"", #""0123456789abcdef""#, #""0123456789abcde""#, #""0123456789abcdeg""#,
        "\"" + String(repeating: "ab", count: 100) + "\"", "\"" + String(repeating: "ab", count: 101) + "\"",
        #""0123456789abcdef\n""#, #""é😀""#, "[]", "[1]", "{}", #"{"name":"A","id":"B","x":1}"#, #"{"name":7}"#,
        #"{"id":null}"#, #"{"title":1}"#, #"{"subtitle":[]}"#, #"{"body":"b","other":{}}"#, #"{"aps":{"x":1}}"#,
    ]

    /// Whole values that are not events at all, or break limits beyond the schema.
    static let extraValues: [String] = [
        "", "{", "[1,2]", #""text""#, "42", "null", #"{"a":1,}"#, #"{"a":01}"#, #"{"a":NaN}"#, #"{"a":1e400}"#,
        #"{"a":"\ud800"}"#, "{} x", "{}",
        object(example + [("custom", #"{"a":"# + String(repeating: "[", count: 30) + String(repeating: "]", count: 30) + "}")]),
        object(example + [("custom", #"{"a":"# + String(repeating: "[", count: 31) + String(repeating: "]", count: 31) + "}")]),
        object(example + [("custom", #"{"pad":""# + String(repeating: "x", count: 17000) + "\"}")]),
    ]

    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// `members` with `path` (a property, or `parent.child`) set to `value`, or left out when `value` is nil.
    static func replacing(_ path: String, with value: String?, in members: [(String, String)]) -> [(String, String)] {
        let parts = path.split(separator: ".").map(String.init)
        guard parts.count == 2 else {
            let kept = members.filter { $0.0 != path }
            return value.map { kept + [(path, $0)] } ?? kept
        }
        let parent = members.first { $0.0 == parts[0] }?.1 ?? "{}"
        let children = (try? JSONSerialization.jsonObject(with: Data(parent.utf8))) as? [String: Any] ?? [:]
        var inner: [(String, String)] = children.keys.sorted().map { key in
            let data = try! JSONSerialization.data(withJSONObject: children[key]!, options: .fragmentsAllowed)
            return (key, String(decoding: data, as: UTF8.self))
        }
        inner = replacing(parts[1], with: value, in: inner)
        return replacing(parts[0], with: object(inner), in: members)
    }

    static let paths = example.map(\.0) + ["caller.name", "caller.id", "alert.title", "alert.subtitle", "alert.body"]
        + ["unknown_extra"]

    /// Every palette value in every property, then a seeded sample of events with two or three properties replaced,
    /// then the values beyond the schema.
    static func corpus() -> [String] {
        var events: [String] = []
        for path in paths {
            for value in palette { events.append(object(replacing(path, with: value, in: example))) }
        }
        var generator = SeededGenerator(seed: 0x5EED_CA11)
        for _ in 0..<600 {
            var members = example
            for _ in 0..<Int.random(in: 2...3, using: &generator) {
                members = replacing(paths.randomElement(using: &generator)!, with: palette.randomElement(using: &generator)!,
                                    in: members)
            }
            events.append(object(members))
        }
        return events + extraValues
    }

    @Test func theDecoderAcceptsWhatTheSchemaAcceptsAndNamesTheSchemasReason() throws {
        let events = Self.corpus()
        #expect(!events.contains { $0.contains("\n") })
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("call-events-\(getpid()).jsonl")
        try Data(events.joined(separator: "\n").utf8 + [0x0A]).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let script = PackageRoot.url.appendingPathComponent("scripts/check-call-events.py").path
        let result = try ChildProcess.run([PythonInterpreter.path(importing: ["jsonschema"]), script, input.path],
                                          timeoutSeconds: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let verdicts = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        try #require(verdicts.count == events.count, "\(verdicts.count) verdicts for \(events.count) events")

        var accepted = 0, reasons: Set<String> = []
        for (event, verdict) in zip(events, verdicts) {
            let decoded = ReferenceEventDecoder.fast(Array(event.utf8))
            if verdict == "ok" {
                accepted += 1
                guard case .event = decoded else {
                    Issue.record("schema accepts, decoder says \(decoded): \(event.prefix(300))")
                    continue
                }
            } else {
                let named = verdict.split(separator: " ").map(String.init)
                reasons.formUnion(named)
                #expect(decoded == .failure(named[0]), "schema says \(verdict): \(event.prefix(300))")
            }
        }
        // The corpus reaches both sides and every reason the schema can name.
        #expect(accepted >= 100)
        let expected: Set<String> = [
            "invalid_json", "not_an_object", "nesting_too_deep", "event_too_large", "unknown_type", "unknown_push",
            "unknown_environment", "bad_device_token", "bad_created_at", "bad_ring_timeout", "empty_field:event_id",
            "empty_field:call_id", "empty_field:topic", "wrong_type:caller.name", "wrong_type:alert.subtitle",
        ]
        #expect(expected.subtracting(reasons).isEmpty, "never named: \(expected.subtracting(reasons).sorted())")
        for field in ["event_id", "type", "call_id", "device_token", "push", "topic", "environment", "created_at"] {
            #expect(reasons.contains("missing_field:" + field) && reasons.contains("wrong_type:" + field), "\(field)")
        }
    }

    /// The schema's `required` list and the properties it documents are the decoder's.
    @Test func theSchemaNamesTheDecodersProperties() throws {
        let data = try Data(contentsOf: PackageRoot.url.appendingPathComponent("docs/call-event.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let required = try #require(schema["required"] as? [String])
        let properties = try #require(schema["properties"] as? [String: Any])
        #expect(required == Array(Self.example.map(\.0).prefix(8)))
        #expect(Set(properties.keys) == Set(Self.example.map(\.0)))

        // docs/integration.md's field table: the same properties, required ones marked so, with the schema's type.
        let guide = try String(contentsOf: PackageRoot.url.appendingPathComponent("docs/integration.md"), encoding: .utf8)
        let rows = guide.split(separator: "\n").filter { $0.hasPrefix("| `") }.map { line in
            line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }.filter { $0.count >= 3 && properties[$0[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] != nil }
        #expect(rows.map { $0[0] } == Self.example.map { "`\($0.0)`" }, "the guide's field table, in the example's order")
        for row in rows {
            let name = row[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let property = properties[name] as? [String: Any] ?? [:]
            let types = (property["type"] as? [String]) ?? [(property["type"] as? String) ?? ""]
            #expect(types.first == row[1], "\(name): the guide says \(row[1]), the schema \(types)")
            #expect(row[2].hasPrefix("yes") == required.contains(name), "\(name): required is \(row[2]) in the guide")
        }
    }
}

/// SplitMix64: a reproducible sample.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
