public import APNs

extension APNsAppRouter: PushSender {}
