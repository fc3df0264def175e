export function handle(req: Request) { return req; }
