import Foundation
import TestSupport
import Testing

/// The README and docs/operations.md document what the binary really offers: the README has a section for every
/// command and stays short; docs/operations.md has every setting of `callpush run` with its variable and default.
@Suite struct ReadmeTests {
    static func text(_ relative: String) -> String {
        (try? String(contentsOf: PackageRoot.url.appendingPathComponent(relative), encoding: .utf8)) ?? ""
    }

    static let readme = text("README.md")
    static let operations = text("docs/operations.md")

    /// The longest README a newcomer reads through; the details live in docs/.
    static let maximumReadmeLines = 300

    @Test func everyCommandHasASection() throws {
        let overview = try CallpushProcess.run(["--help"])
        let names = overview.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { !$0.hasPrefix("Commands:") }.dropFirst()
            .prefix { !$0.isEmpty }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(names.count >= 6)
        let headings = Self.readme.split(separator: "\n").filter { $0.hasPrefix("### ") }
        for name in names {
            #expect(headings.contains { $0.contains("`callpush \(name)`") }, "README has no section for callpush \(name)")
        }
    }

    @Test func everyRunSettingIsInTheConfigurationTable() throws {
        let help = try CallpushProcess.run(["run", "--help"]).stdout
        let rows = Self.operations.split(separator: "\n").filter { $0.hasPrefix("| `") }
        var checked = 0
        for line in help.split(separator: "\n") {
            guard let flag = line.split(separator: " ").first(where: { $0.hasPrefix("--") }),
                  let variable = line.range(of: #"CALLPUSH_[A-Z0-9_]+"#, options: .regularExpression).map({ String(line[$0]) }),
                  flag != "--print-config"
            else { continue }
            // --kafka-retry-tiers → kafka.retry-tiers: the first dash separates the section.
            let name = String(flag.dropFirst(2))
            guard let dash = name.firstIndex(of: "-") else { continue }
            let key = name[..<dash] + "." + name[name.index(after: dash)...]
            let row = rows.first { $0.hasPrefix("| `\(key)` |") }
            #expect(row != nil, "docs/operations.md configuration table lacks \(key)")
            #expect(row?.contains("`\(variable)`") == true, "docs/operations.md row of \(key) lacks \(variable)")
            if let range = line.range(of: #"\[default: [^\]]+\]"#, options: .regularExpression) {
                let value = line[range].dropFirst("[default: ".count).dropLast()
                #expect(row?.contains("`\(value)`") == true, "docs/operations.md row of \(key) lacks its default \(value)")
            }
            checked += 1
        }
        #expect(checked >= 40)
    }

    @Test func theTwoCommandsAreUpFront() {
        let start = Self.readme.prefix(2_000)
        #expect(start.contains("make demo"))
        #expect(start.contains("make test"))
    }

    @Test func theReadmeIsShort() {
        let lines = Self.readme.utf8.filter { $0 == UInt8(ascii: "\n") }.count  // as `wc -l` counts
        #expect(!Self.readme.isEmpty)
        #expect(lines <= Self.maximumReadmeLines, "README.md has \(lines) lines, at most \(Self.maximumReadmeLines)")
    }
}
