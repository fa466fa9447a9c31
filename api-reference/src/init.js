/* global window, SwaggerUIBundle -- a classic script in the page, after swagger-ui-bundle.js */
// Starts Swagger UI on this service's own OpenAPI document. A file of its own rather than an inline
// script, so the page runs under the strict CSP (script-src 'self', no 'unsafe-inline').
window.ui = SwaggerUIBundle({
  url: '/api/v1/openapi.json',
  dom_id: '#swagger-ui',
  // Never ask validator.swagger.io about the document: the page talks to this origin only.
  validatorUrl: null,
  // No ?url= or ?configUrl= from the address bar: the page shows this service's document, nothing else.
  queryConfigEnabled: false,
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  // "Try it out" sends real requests with the token given under "Authorize"; it is kept in the page's memory only.
  persistAuthorization: false,
});
