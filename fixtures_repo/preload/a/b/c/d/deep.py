print("deep")
