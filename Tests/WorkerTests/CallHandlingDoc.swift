import Foundation
import TestSupport

/// docs/call-handling.md as its tables: the table-style tests read a section's rows to check that they cover exactly
/// those rows.
enum CallHandlingDoc {
    static let url = PackageRoot.url.appendingPathComponent("docs/call-handling.md")

    /// The first column of every row of the first table under the `## title` heading (header and separator rows
    /// left out), backticks removed, in order.
    static func keys(section title: String) throws -> [String] {
        let text = try String(contentsOf: url, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let heading = lines.firstIndex(where: { $0 == "## \(title)" }) else {
            throw Missing(what: "no section \"## \(title)\" in docs/call-handling.md")
        }
        var rows: [String] = []
        var inTable = false
        for line in lines[(heading + 1)...] {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("|") else {
                if inTable { break }
                continue
            }
            inTable = true
            rows.append(String(line))
        }
        // The header row, then the separator row.
        guard rows.count >= 2, rows[1].allSatisfy({ "|-: ".contains($0) }) else {
            throw Missing(what: "no table under \"## \(title)\"")
        }
        return rows.dropFirst(2).map { row in
            let cells = row.split(separator: "|", omittingEmptySubsequences: false)
            return cells[1].replacingOccurrences(of: "`", with: "").trimmingCharacters(in: .whitespaces)
        }
    }

    struct Missing: Error, CustomStringConvertible {
        var what: String
        var description: String { what }
    }
}
