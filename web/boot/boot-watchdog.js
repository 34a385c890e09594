// @ts-check
// A classic script (not a module): it runs even when the host serves boot.js, or a module it
// imports, with a type browsers refuse for module scripts, or not at all. boot.js then never runs
// and cannot explain anything, so this names the file, what the host sent and the fix. It does
// nothing once boot.js runs (boot.js reports every later fault itself, web/boot/host-faults.js).
(function () {
  "use strict";
  var script = document.querySelector('script[type="module"][src="boot/boot.js"]');
  if (!script) return;
  var JS = /^(text|application)\/(x-)?(javascript|ecmascript)$/;
  function fault(file, response) {
    var type = (response.headers.get("content-type") || "").split(";")[0].trim().toLowerCase();
    if (response.status === 404)
      return file + " is missing: the host answered 404 Not Found. Copy the whole static/ folder to the host again.";
    if (response.status === 403)
      return (
        file +
        " is forbidden: the host answered 403 Forbidden. Make the copied folder readable by the server (for example chmod -R a+rX)."
      );
    if (!response.ok) return file + ": the host answered HTTP " + response.status + ".";
    if (type === "text/html")
      return (
        file +
        ": the host sent an HTML page (text/html) in place of the file: a fallback rule (such as try_files $uri /index.html) catches it, or the file is missing."
      );
    if (!JS.test(type)) {
      return (
        file +
        " was served as " +
        (type || "a response without a type") +
        "; a module script needs a JavaScript type (text/javascript), so the browser refused it. " +
        "nginx: add `js` to the `application/javascript` line of mime.types (or `types { text/javascript js; }`); Apache: `AddType text/javascript .js`."
      );
    }
    return null;
  }
  function check(file) {
    // A check the host never answers must not hold back what the others found.
    var limit = typeof AbortSignal !== "undefined" && AbortSignal.timeout ? AbortSignal.timeout(10000) : undefined;
    return fetch(file + "?check", { method: "HEAD", cache: "no-cache", signal: limit }).then(
      function (response) {
        return fault(file, response);
      },
      function (error) {
        return file + " could not be fetched (" + error.message + ").";
      },
    );
  }
  script.addEventListener("error", function () {
    if (document.documentElement.dataset.state !== "loading") return;
    // boot.js and the modules it imports: index.html preloads them (web/'s modules, or the bundle
    // of a built site: buildsys/bundle.py), with the app's. Not the first screen's module (early.js:
    // early-start.js imports it, and reports its own failure), nor the runtime's files and the
    // front-end libraries, which are not boot.js's imports (boot.js checks the runtime's once it runs).
    var files = ["boot/boot.js"];
    document.querySelectorAll('link[rel="modulepreload"]').forEach(function (link) {
      var file = link.getAttribute("href") || "";
      if (file && file !== "boot/early.js" && !/^(pyodide|vendor)\//.test(file) && files.indexOf(file) < 0)
        files.push(file);
    });
    Promise.all(files.map(check)).then(function (found) {
      var messages = found.filter(Boolean);
      if (document.documentElement.dataset.state !== "loading") return;
      var box = document.getElementById("boot-error");
      if (!box) return;
      document.getElementById("boot-error-summary").textContent =
        "The page's start-up script did not load. " +
        (messages.length
          ? messages.join(" ")
          : "The browser refused boot.js or a module it imports; see the browser's console.");
      document.getElementById("boot-error-detail").hidden = true;
      document.getElementById("boot-status").textContent = "Loading stopped: see the error below.";
      box.hidden = false;
      document.documentElement.dataset.state = "error";
    });
  });
})();
