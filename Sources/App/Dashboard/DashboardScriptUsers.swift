extension DashboardAssets {
    /// The users page: search, one user, deletion with a confirm step.
    static let usersScript = #"""
          // Users
          let currentUser = null;
          let searches = 0;

          async function search() {
            const q = document.querySelector('#search input[name="q"]').value.trim();
            const mine = ++searches;
            try {
              const users = await api("/dashboard/api/users?q=" + encodeURIComponent(q));
              if (mine !== searches) return;  // a later search answers instead
              const rows = users.map(u => ({
                email: el("button", { type: "button", class: "link", "data-user": u.id, text: u.email || "(anonymous)" }),
                id: u.id, provider: u.provider, onboarding_state: u.onboarding_state, created_at: u.created_at, last_sign_in_at: u.last_sign_in_at,
              }));
              document.getElementById("results").replaceChildren(users.length === 50 ? el("p", { class: "about", text: "The newest 50 matches." }) : "", table(rows));
              say(users.length === 0 ? "No user matches." : "");
            } catch (error) {
              say(error.message, true);
            }
          }

          async function openUser(id) {
            try {
              const data = await api("/dashboard/api/users/" + encodeURIComponent(id));
              currentUser = data.user;
              history.replaceState(null, "", "#" + id);
              document.getElementById("user").hidden = false;
              document.getElementById("user-title").textContent = data.user.email || "Anonymous user " + data.user.id;
              document.getElementById("user-account").replaceChildren(definitionList(data.user));
              document.getElementById("user-profile").replaceChildren(definitionList(data.profile));
              // One card per child, every column in it (a table of them is too wide to read).
              document.getElementById("user-children").replaceChildren(data.children.length === 0 ? el("p", { class: "empty", text: "No children." }) :
                el("div", { class: "grid" }, data.children.map(child => el("div", { class: "child" }, [el("h4", { text: child.name }), definitionList(child)]))));
              document.getElementById("user-providers").replaceChildren(table(data.providers));
              document.getElementById("user-sessions").replaceChildren(table(data.sessions));
              document.getElementById("delete-confirm").hidden = true;
              document.getElementById("delete-start").hidden = false;
              say("");
            } catch (error) {
              say(error.message, true);
            }
          }

          async function deleteUser() {
            if (!currentUser) return;
            try {
              await api("/dashboard/api/users/" + encodeURIComponent(currentUser.id), { method: "DELETE", headers: { Accept: "application/json", "X-CSRF-Token": csrf } });
              say("Deleted " + (currentUser.email || currentUser.id) + ".");
              currentUser = null;
              document.getElementById("user").hidden = true;
              history.replaceState(null, "", location.pathname);
              search().then(() => say("User deleted."));
            } catch (error) {
              say(error.message, true);
            }
          }

          function initUsers() {
            document.getElementById("search").addEventListener("submit", event => { event.preventDefault(); search(); });
            document.getElementById("results").addEventListener("click", event => {
              const id = event.target.getAttribute && event.target.getAttribute("data-user");
              if (id) openUser(id);
            });
            document.getElementById("delete-start").addEventListener("click", () => {
              document.getElementById("delete-name").textContent = currentUser ? (currentUser.email || currentUser.id) : "";
              document.getElementById("delete-confirm").hidden = false;
              document.getElementById("delete-start").hidden = true;
            });
            document.getElementById("delete-no").addEventListener("click", () => {
              document.getElementById("delete-confirm").hidden = true;
              document.getElementById("delete-start").hidden = false;
            });
            document.getElementById("delete-yes").addEventListener("click", deleteUser);
            search();
            if (location.hash.length > 1) openUser(location.hash.slice(1));
          }

        """#
}
