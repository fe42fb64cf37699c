/// Tests reach ToolSupport (``ChildProcess``, ``FreePort``, ``ExternalTool``, ``PackageRoot``) through
/// `import TestSupport`.
@_exported import ToolSupport
