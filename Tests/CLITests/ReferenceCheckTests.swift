import Foundation
import TestSupport
import Testing

/// The repository speaks for itself: no file refers to a work session, to this project's own issue numbers, to a
/// commit by its hash in prose, or to a path on a developer's machine, and every link or document a file cites
/// exists (history lives in git, facts in the docs). References to other projects' issues stay.
@Suite struct ReferenceCheckTests {
    /// Every text file of the repository (tracked or not) outside build output, relative to the root.
    static func files() throws -> [(path: String, text: String)] {
        let skipped: Set<String> = [".build", ".git", ".swiftpm", "Package.resolved"]
        var files: [(String, String)] = []
        let enumerator = FileManager.default.enumerator(at: PackageRoot.url, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            if skipped.contains(url.lastPathComponent) {
                enumerator?.skipDescendants()
                continue
            }
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true,
                  let data = try? Data(contentsOf: url), !data.contains(0),
                  let text = String(data: data, encoding: .utf8) else { continue }
            files.append((String(url.path.dropFirst(PackageRoot.url.path.count + 1)), text))
        }
        return files.filter { $0.0 != "Tests/CLITests/ReferenceCheckTests.swift" }
    }

    static func matches(_ pattern: String, in text: String, options: NSRegularExpression.Options = []) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern, options: options)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range, in: text).map { String(text[$0]) }
        }
    }

    /// Projects whose issues and pull requests may be cited by number.
    static let otherProjects = #"(librdkafka|nghttp2|APNSwift|confluent-kafka[\w-]{0,8}|OpenSSL|kafka-python|aioapns|swift[\w-]{0,12}|prometheus|grafana|KEDA)"#

    /// What a finding looks like, and why it is not allowed.
    static let forbidden: [(pattern: String, why: String)] = [
        (#"\b(work )?sessions? [0-9]+\b|\b(this|last|previous|next|earlier|a later) (work )?session\b"#,
         "a work session"),
        (#"(?<!\#(otherProjects) )(?<!\#(otherProjects) issue )(?<!\#(otherProjects) PR )(?<![\w/&])#[0-9]{1,4}\b"#,
         "an issue number of this project"),
        (#"(?<!\#(otherProjects) )\bissues? #?[0-9]+\b"#, "an issue number of this project"),
        (#"/(?:work|Users|root)/|/home/(?!callpush\b)|/tmp/bash_jobs"#, "a path on a developer's machine"),
    ]

    /// The line of `text` on which `offset` (UTF-16) falls, 1-based.
    static func lineNumber(_ offset: Int, in text: String) -> Int {
        let prefix = (text as NSString).substring(to: offset)
        return prefix.utf16.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
    }

    static func findings(_ pattern: String, in text: String, path: String, options: NSRegularExpression.Options = [])
        -> [String]
    {
        let expression = try! NSRegularExpression(pattern: pattern, options: options)
        return expression.matches(in: text, range: NSRange(location: 0, length: (text as NSString).length)).map {
            "\(path):\(lineNumber($0.range.location, in: text)): \((text as NSString).substring(with: $0.range))"
        }
    }

    @Test func noFileRefersToWorkSessionsIssuesOrMachinePaths() throws {
        var findings: [String] = []
        for (path, text) in try Self.files() {
            for rule in Self.forbidden {
                findings += Self.findings(rule.pattern, in: text, path: path, options: [.caseInsensitive])
                    .map { "\($0) (\(rule.why))" }
            }
        }
        #expect(findings.isEmpty, "\(findings.count) findings:\n\(findings.prefix(40).joined(separator: "\n"))")
    }

    /// A commit hash in prose: 7–12 or 40 hex digits with letters and digits, in Markdown or a comment.
    @Test func noProseCitesACommitHash() throws {
        let hash = #"(?<![0-9A-Za-z_./-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])([0-9a-f]{7,12}|[0-9a-f]{40})(?![0-9A-Za-z_-])"#
        let hashEverywhere = #"(?m)"# + hash
        let hashInSlashComments = #"(?m)^\s*(//|\*).*?"# + hash
        let hashInHashComments = #"(?m)^\s*#.*?"# + hash
        var findings: [String] = []
        for (path, text) in try Self.files() {
            let name = (path as NSString).lastPathComponent
            let pattern: String
            switch (path as NSString).pathExtension {
            case "md": pattern = hashEverywhere
            case "swift", "c", "h", "modulemap": pattern = hashInSlashComments
            case "py", "sh", "yml", "yaml", "toml", "cfg": pattern = hashInHashComments
            default: pattern = name == "Makefile" || name == "Dockerfile" || name == "run" ? hashInHashComments : hashEverywhere
            }
            findings += Self.findings(pattern, in: text, path: path)
        }
        #expect(findings.isEmpty, "commit hashes in prose:\n\(findings.joined(separator: "\n"))")
    }

    /// Every relative Markdown link resolves to a file, and its anchor to a heading of that file; every
    /// `docs/…` or top-level document a source file cites exists.
    /// `path` with `.` and `..` components resolved (relative to the root).
    static func normalized(_ path: String) -> String {
        var components: [Substring] = []
        for component in path.split(separator: "/") {
            if component == ".." { _ = components.popLast() } else if component != "." { components.append(component) }
        }
        return components.joined(separator: "/")
    }

    @Test func everyLinkAndCitedDocumentExists() throws {
        let files = try Self.files()
        let byPath = Dictionary(files.map { ($0.path, $0.text) }, uniquingKeysWith: { first, _ in first })
        var broken: [String] = []
        var linksSeen = 0
        for (path, text) in files where path.hasSuffix(".md") {
            let directory = (path as NSString).deletingLastPathComponent
            for link in Self.matches(#"\]\(([^)\s]+)\)"#, in: text) {
                let target = String(link.dropFirst(2).dropLast())
                if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") { continue }
                linksSeen += 1
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let file = parts[0].isEmpty ? path : Self.normalized((directory as NSString).appendingPathComponent(parts[0]))
                let exists = byPath[file] != nil
                    || FileManager.default.fileExists(atPath: PackageRoot.url.appendingPathComponent(file).path)
                guard exists else {
                    broken.append("\(path): \(target): no such file")
                    continue
                }
                if parts.count == 2, file.hasSuffix(".md"), let markdown = byPath[file],
                   !AlertRunbookTests.anchors(markdown).contains(parts[1]) {
                    broken.append("\(path): \(target): no such heading in \(file)")
                }
            }
        }
        let documentNames = Set(byPath.keys.map { ($0 as NSString).lastPathComponent })
        for (path, text) in files {
            for cited in Self.matches(#"(?<![\w/.-])docs/[\w./-]*\w"#, in: text) where byPath[cited] == nil {
                broken.append("\(path): cites \(cited), which does not exist")
            }
            for cited in Self.matches(#"(?<![\w/.-])[\w-]+\.md\b"#, in: text) where !documentNames.contains(cited) {
                broken.append("\(path): cites \(cited), which is no file of the repository")
            }
        }
        #expect(linksSeen >= 20)
        #expect(broken.isEmpty, "\(broken.count) broken:\n\(broken.joined(separator: "\n"))")
    }
}
