// The admin console service: static files at /console/ on the REST listener (issue 19).
export { CONSOLE_PATH, registerConsoleRoutes } from './console.routes.ts';
