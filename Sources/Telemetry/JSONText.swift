/// Minimal JSON string escaping (RFC 8259) shared by the log renderer and other hand-written JSON.
package enum JSONText {
    /// Appends `value` as a quoted, escaped JSON string.
    static func appendString(_ value: String, to output: inout String) {
        output.append("\"")
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output.append("\\\"")
            case "\\": output.append("\\\\")
            case "\n": output.append("\\n")
            case "\r": output.append("\\r")
            case "\t": output.append("\\t")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default:
                output.unicodeScalars.append(scalar)
            }
        }
        output.append("\"")
    }

    /// `value` as a quoted, escaped JSON string.
    package static func quoted(_ value: String) -> String {
        var output = ""
        appendString(value, to: &output)
        return output
    }
}
