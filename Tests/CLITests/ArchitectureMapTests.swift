import Foundation
import TestSupport
import Testing

/// ARCHITECTURE.md names real code: every type and `Type.member` it puts in backticks is declared in Sources/, and
/// the event's path has at most eight steps.
@Suite struct ArchitectureMapTests {
    /// Every Swift source under Sources/, by path.
    static let sourceFiles: [(path: String, text: String)] = {
        let root = PackageRoot.url.appendingPathComponent("Sources")
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        var files: [(path: String, text: String)] = []
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift", let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            files.append((String(url.path.dropFirst(root.path.count + 1)), text))
        }
        return files
    }()

    /// Every Swift source, concatenated (declarations are searched as text).
    static let sources: String = sourceFiles.map(\.text).joined()

    @Test func everyNamedTypeAndMemberExists() throws {
        let map = try String(contentsOf: PackageRoot.url.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: "`([A-Z][A-Za-z0-9]+)(?:\\.([a-z][A-Za-z0-9]*))?`")
        let matches = pattern.matches(in: map, range: NSRange(map.startIndex..., in: map))
        var checked = 0
        for match in matches {
            let type = String(map[Range(match.range(at: 1), in: map)!])
            let declared = ["class", "struct", "enum", "protocol", "actor"].contains { Self.sources.contains("\($0) \(type)") }
            let isModule = FileManager.default.fileExists(atPath: PackageRoot.url.appendingPathComponent("Sources/\(type)").path)
            #expect(declared || isModule, "ARCHITECTURE.md names \(type), which Sources/ does not declare")
            if let range = Range(match.range(at: 2), in: map) {
                let member = String(map[range])
                #expect(Self.sources.contains("func \(member)(") || Self.sources.contains("var \(member)"),
                        "ARCHITECTURE.md names \(type).\(member), which Sources/ does not declare")
            }
            checked += 1
        }
        #expect(checked >= 20)
        let steps = map.split(separator: "\n").filter { $0.range(of: #"^\d+\. "#, options: .regularExpression) != nil }
        #expect((4...8).contains(steps.count), "the event's path has \(steps.count) steps")
    }

    /// `public` only where an `open` class needs it (ARCHITECTURE.md, "Package surface"): the package builds
    /// executables, so what another module uses is `package`; a public type is an open class or a type an open class's
    /// initializer or open member names, and `public` appears only in the files that declare those types.
    @Test func publicOnlyWhereAnOpenClassNeedsIt() throws {
        let publicType = try NSRegularExpression(
            pattern: #"^\s*(public|open)\s+(?:final\s+)?(?:struct|enum|class|protocol|actor)\s+([A-Za-z0-9]+)"#,
            options: .anchorsMatchLines)
        let publicWord = try NSRegularExpression(
            pattern: #"^[^/"\n]*\b(public|open)\s+(?:import|func|var|let|init|struct|class|enum|protocol|actor|typealias|subscript|extension|static|final|mutating|nonisolated|convenience|required|lazy|indirect)\b"#,
            options: .anchorsMatchLines)
        var openSignatures = "", publicTypes: [String] = [], filesWithPublic: [String] = [], filesWithPublicTypes: Set<String> = []
        for (name, text) in Self.sourceFiles {
            let range = NSRange(text.startIndex..., in: text)
            for line in text.split(separator: "\n") where line.contains("open func ") || line.contains("open var ")
                || line.contains("public init(") {
                openSignatures += line + "\n"
            }
            for match in publicType.matches(in: text, range: range) {
                filesWithPublicTypes.insert(name)
                if text[Range(match.range(at: 1), in: text)!] == "public" {
                    publicTypes.append(String(text[Range(match.range(at: 2), in: text)!]))
                }
            }
            if publicWord.firstMatch(in: text, range: range) != nil { filesWithPublic.append(name) }
        }
        #expect(!openSignatures.isEmpty)
        for type in publicTypes {
            #expect(openSignatures.contains(type), "\(type) is public, but no open class's initializer or open member names it")
        }
        for file in filesWithPublic {
            #expect(filesWithPublicTypes.contains(file), "\(file) says public or open, but declares no public or open type")
        }
    }

    /// Every property that skips the runtime's exclusivity check is one ARCHITECTURE.md names (`Type.property`).
    @Test func exclusivityOptOutsAreNamed() throws {
        let map = try String(contentsOf: PackageRoot.url.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let optOut = try NSRegularExpression(pattern: #"@exclusivity\(unchecked\) var ([a-zA-Z0-9]+)"#)
        let names = optOut.matches(in: Self.sources, range: NSRange(Self.sources.startIndex..., in: Self.sources)).map {
            String(Self.sources[Range($0.range(at: 1), in: Self.sources)!])
        }
        #expect(!names.isEmpty)
        for name in names { #expect(map.contains(".\(name)`"), "ARCHITECTURE.md does not name the opt-out `\(name)`") }
    }

    /// The threads table names each thread as the code names it (`ThreadName.setCurrent`), and every thread the code
    /// names is in the table.
    @Test func threadNamesMatchTheCode() throws {
        let map = try String(contentsOf: PackageRoot.url.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let table = map.components(separatedBy: "## Threads")[1].components(separatedBy: "\n## ")[0]
        let named = try NSRegularExpression(pattern: #"ThreadName\.setCurrent\("([a-z0-9-]+)(\\\()?"#)
        var codeNames: Set<String> = []
        for match in named.matches(in: Self.sources, range: NSRange(Self.sources.startIndex..., in: Self.sources)) {
            let name = String(Self.sources[Range(match.range(at: 1), in: Self.sources)!])
            codeNames.insert(match.range(at: 2).location == NSNotFound ? name : name + "<n>")
        }
        #expect(codeNames.count >= 5, "\(codeNames)")
        for name in codeNames { #expect(table.contains("`\(name)`"), "ARCHITECTURE.md's threads table lacks `\(name)`") }
        let quoted = try NSRegularExpression(pattern: #"^\| [^|]*\(`([a-z0-9<>-]+)`"#, options: .anchorsMatchLines)
        for match in quoted.matches(in: table, range: NSRange(table.startIndex..., in: table)) {
            let name = String(table[Range(match.range(at: 1), in: table)!])
            #expect(codeNames.contains(name), "ARCHITECTURE.md names a thread `\(name)` the code does not name")
        }
    }
}
