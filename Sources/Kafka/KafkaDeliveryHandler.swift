/// Where the delivery reports of records go when their producer keeps an object for them anyway (the worker keeps one
/// per outcome waiting for its records): ``KafkaProducer/produce(_:handler:tag:)`` stores the object and the tag, so
/// no closure is made per record.
package protocol KafkaDeliveryHandler: AnyObject, Sendable {
    /// The delivery report of the record produced with `tag`, or why it failed: once, on the producer thread.
    func delivered(_ result: Result<KafkaDeliveryReport, KafkaError>, tag: Int)
}
