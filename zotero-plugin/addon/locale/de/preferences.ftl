## Zocrates-Einstellungen (Zotero > Einstellungen > Zocrates). Die Gruppen unter der Einleitung
## erzeugt src/ui/prefs-view.js.

zocrates-pref-title = Zocrates
zocrates-pref-intro = Zocrates beantwortet Fragen zu Ihrer Bibliothek über einen lokalen Dienst, der mit `make run` gestartet wird. Diese Einstellungen speichert dieser Dienst (zocrates_config.json in Ihrem Zotero-Datenverzeichnis), mit Ausnahme der Gateway-Adresse, die Zotero speichert.
zocrates-pref-loading = Zocrates-Einstellungen werden geladen…
zocrates-pref-connection = Verbindung
zocrates-pref-gateway-url = Gateway-URL
zocrates-pref-gateway-help = Wo `make run` Zocrates bereitstellt (standardmäßig http://127.0.0.1:8765). Das Token wird aus Ihrem Zotero-Datenverzeichnis gelesen: zocrates-data/gateway.token.
zocrates-pref-test-connection =
    .label = Verbindung testen
zocrates-pref-sessions = Chats & Speicher
zocrates-pref-storage-stats = Datenbankgröße und Chats: { $size }, { $sessions } Chats
zocrates-pref-retention-days = Chats löschen, die so lange nicht aktualisiert wurden (Tage, 0 behält sie)
zocrates-pref-max-sessions = Höchstens so viele Chats behalten (0: keine Begrenzung)
zocrates-pref-clean-up =
    .label = Jetzt aufräumen
zocrates-pref-research = Deep Research
zocrates-pref-hitl-enabled =
    .label = An einem Kontrollpunkt anhalten, wenn eine Suche Lücken lässt
