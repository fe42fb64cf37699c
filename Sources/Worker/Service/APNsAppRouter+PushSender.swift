internal import APNs

extension APNsAppRouter: PushSender {}
