internal import APNs

extension APNsClient: PushSender {}
