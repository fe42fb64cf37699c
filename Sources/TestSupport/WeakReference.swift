/// A weak reference a test can read from a `@Sendable` closure, to see that an object was released.
public final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    public weak let object: Object?

    public init(_ object: Object) { self.object = object }
}
