/// The version callpush reports in `callpush_build_info` and logs.
enum CallpushVersion {
    static let current = "0.1.0"
}
