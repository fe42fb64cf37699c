import Foundation
import Testing

/// Every alert of Deploy/prometheus/alerts.yml links its runbook entry: `annotations.runbook_url` names
/// docs/operations.md and an anchor that is the GitHub anchor of the heading named after the alert, under
/// "Alert runbook"; each entry names dashboard panels that exist in Grafana/dashboards/callpush.json.
@Suite struct AlertRunbookTests {
    static let document = "docs/operations.md"

    /// The anchor GitHub gives a Markdown heading: lowercase, punctuation other than `-` and `_` dropped, spaces
    /// turned into `-`.
    static func anchor(_ heading: String) -> String {
        var anchor = ""
        for character in heading.lowercased() {
            if character == " " {
                anchor.append("-")
            } else if character.isLetter || character.isNumber || character == "-" || character == "_" {
                anchor.append(character)
            }
        }
        return anchor
    }

    /// Headings of a Markdown text (outside fenced code), level and text.
    static func headings(_ markdown: String) -> [(level: Int, text: String)] {
        var headings: [(level: Int, text: String)] = []
        var fenced = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced, line.hasPrefix("#") else { continue }
            let level = line.prefix { $0 == "#" }.count
            guard level <= 6, line.dropFirst(level).first == " " else { continue }
            headings.append((level, line.dropFirst(level + 1).trimmingCharacters(in: .whitespaces)))
        }
        return headings
    }

    /// Every anchor of a Markdown text, a repeated one numbered as GitHub does (`-1`, `-2`, …).
    static func anchors(_ markdown: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        for heading in headings(markdown) {
            let base = anchor(heading.text)
            let count = seen[base, default: 0]
            seen[base] = count + 1
            anchors.insert(count == 0 ? base : "\(base)-\(count)")
        }
        return anchors
    }

    /// Alert name → its annotations, from the rule file.
    static func alerts() throws -> [String: [String: String]] {
        var alerts: [String: [String: String]] = [:]
        let rules = try DeployAssetsTests.yamlObject("Deploy/prometheus/alerts.yml")
        for case let group as [String: Any] in rules["groups"] as? [Any] ?? [] {
            for case let rule as [String: Any] in group["rules"] as? [Any] ?? [] {
                guard let name = rule["alert"] as? String else { continue }
                alerts[name] = rule["annotations"] as? [String: String] ?? [:]
            }
        }
        return alerts
    }

    /// The runbook entries: heading → the text up to the next heading.
    static func runbookEntries(_ markdown: String) -> [String: String] {
        guard let start = markdown.range(of: "\n## Alert runbook\n") else { return [:] }
        var section = markdown[start.upperBound...]
        if let end = section.range(of: "\n## ") { section = section[..<end.lowerBound] }
        var entries: [String: String] = [:]
        for part in section.components(separatedBy: "\n### ").dropFirst() {
            let heading = String(part.prefix { $0 != "\n" }).trimmingCharacters(in: .whitespaces)
            entries[heading] = String(part.drop { $0 != "\n" })
        }
        return entries
    }

    static func panelTitles() throws -> Set<String> {
        let data = try Data(contentsOf: URL(fileURLWithPath: DeployAssetsTests.path("Grafana/dashboards/callpush.json")))
        let dashboard = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return Set((dashboard["panels"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String })
    }

    @Test func everyAlertLinksItsRunbookEntry() throws {
        let markdown = try DeployAssetsTests.text(Self.document)
        let anchors = Self.anchors(markdown)
        let alerts = try Self.alerts()
        #expect(alerts.count >= 20, "alerts.yml has \(alerts.count) alerts")
        for (name, annotations) in alerts.sorted(by: { $0.key < $1.key }) {
            guard let url = annotations["runbook_url"] else {
                Issue.record("\(name) has no runbook_url annotation")
                continue
            }
            let parts = url.split(separator: "#", maxSplits: 1).map(String.init)
            #expect(parts.count == 2, "\(name): runbook_url \(url) has no anchor")
            // docs/operations.md relative to the repository root, or a GitHub blob URL of it.
            let path = parts[0].range(of: #"^https://github\.com/[^/]+/[^/]+/blob/[^/]+/"#, options: .regularExpression)
                .map { String(parts[0][$0.upperBound...]) } ?? parts[0]
            #expect(path == Self.document, "\(name): runbook_url \(url) does not name \(Self.document)")
            let fragment = parts.count == 2 ? parts[1] : ""
            #expect(anchors.contains(fragment), "\(name): #\(fragment) is not a heading of \(Self.document)")
            #expect(fragment == Self.anchor(name), "\(name): runbook_url points at #\(fragment), not at its own entry")
        }
    }

    @Test func everyRunbookEntryIsAnAlertAndNamesRealPanels() throws {
        let entries = Self.runbookEntries(try DeployAssetsTests.text(Self.document))
        let alerts = Set(try Self.alerts().keys)
        #expect(Set(entries.keys) == alerts, """
            runbook entries without an alert: \(Set(entries.keys).subtracting(alerts).sorted()); \
            alerts without an entry: \(alerts.subtracting(entries.keys).sorted())
            """)
        let titles = try Self.panelTitles()
        #expect(titles.count >= 20)
        let quoted = try NSRegularExpression(pattern: #""([^"]+)""#)
        for (alert, entry) in entries.sorted(by: { $0.key < $1.key }) {
            // The "- **Dashboard**: …" bullet, its continuation lines joined.
            guard let start = entry.range(of: "- **Dashboard**:") else {
                Issue.record("runbook entry \(alert) names no dashboard panel")
                continue
            }
            let rest = entry[start.upperBound...]
            let end = rest.range(of: "\n- ").map(\.lowerBound) ?? rest.endIndex
            let bullet = rest[..<end].split(whereSeparator: \.isWhitespace).joined(separator: " ")
            let names = quoted.matches(in: bullet, range: NSRange(bullet.startIndex..., in: bullet)).compactMap {
                Range($0.range(at: 1), in: bullet).map { String(bullet[$0]) }
            }
            #expect(!names.isEmpty, "runbook entry \(alert) names no dashboard panel")
            for name in names {
                #expect(titles.contains(name), "runbook entry \(alert) names panel \"\(name)\", which the dashboard lacks")
            }
        }
    }
}
