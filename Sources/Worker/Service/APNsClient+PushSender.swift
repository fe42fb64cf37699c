public import APNs

extension APNsClient: PushSender {}
