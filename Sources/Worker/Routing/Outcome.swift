/// The single final outcome of one consumed event; the counts add up to the events consumed.
package enum Outcome: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// APNs accepted the push (200).
    case delivered
    /// APNs said the token is dead; an invalidation record was produced.
    case invalidated
    /// A transient failure; the event was produced to the next retry tier.
    case retried
    /// Undecodable, unmappable, rejected by APNs, or out of retries; produced to the dead-letter topic.
    case deadLettered = "dead_lettered"
    /// Past its deadline (ring deadline, or retry deadline); dropped.
    case expired
    /// Its call ended before it could be sent; dropped so the phone never rings after the hang-up.
    case cancelled
    /// A record its outcome needed was refused by Kafka for good (too large, invalid, a topic the worker may not
    /// write): the event ends here, logged with its coordinates and alerted, so its partition moves on.
    case abandoned

    package var description: String { rawValue }
}
