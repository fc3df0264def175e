def serve():
    return "ok"
