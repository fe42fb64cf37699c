/// A weak reference a test can read from a `@Sendable` closure, to see that an object was released.
package final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    package weak let object: Object?

    package init(_ object: Object) { self.object = object }
}
