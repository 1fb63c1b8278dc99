import { describe, expect, it } from 'vitest'
import { REGCONFIGS, regconfigFor } from './language.fns.js'

describe('regconfigFor', () => {
  const samples: [string, string][] = [
    ['english', 'To install the agent on Linux, download the package and run the installer with your API key.'],
    ['german', 'Um den Agenten unter Linux zu installieren, laden Sie das Paket herunter und führen Sie das Installationsprogramm mit Ihrem Schlüssel aus.'],
    ['french', "Pour installer l'agent sous Linux, téléchargez le paquet et lancez le programme d'installation avec votre clé."],
    ['spanish', 'Para instalar el agente en Linux, descargue el paquete y ejecute el instalador con su clave de la cuenta.'],
    ['italian', "Per installare l'agente su Linux, scarica il pacchetto e avvia il programma di installazione con la chiave che è nella pagina."],
    ['portuguese', 'Para instalar o agente no Linux, baixe o pacote e execute o instalador com a sua chave de acesso. Não é difícil.'],
    ['dutch', 'Om de agent op Linux te installeren, download je het pakket en voer je het installatieprogramma uit met een sleutel die niet verloopt.'],
    ['russian', 'Чтобы установить агент в Linux, скачайте пакет и запустите установщик с вашим ключом.'],
    ['greek', 'Για να εγκαταστήσετε τον πράκτορα σε Linux, κατεβάστε το πακέτο.'],
    [
      'swedish',
      'För att installera agenten på Linux laddar du ner paketet och kör installationsprogrammet med din nyckel, det är inte svårt och det går fort.',
    ],
    ['turkish', 'Aracı Linux üzerine kurmak için paketi indirin ve anahtarınız ile kurulum programını çalıştırın, bu çok kolay bir işlem değil mi?'],
  ]
  for (const [lang, text] of samples) {
    it(`detects ${lang}`, () => expect(regconfigFor(text)).toBe(lang))
  }

  it('falls back to simple (or the given fallback) without a clear signal', () => {
    expect(regconfigFor('')).toBe('simple')
    expect(regconfigFor('npm install --save foo@1.2.3')).toBe('simple')
    expect(regconfigFor('pricing plans', 'english')).toBe('english')
    expect(regconfigFor('価格プランについて教えてください')).toBe('simple')
  })

  it('detects a short question in English', () => {
    expect(regconfigFor('how do I reset my password?')).toBe('english')
    expect(regconfigFor('wie kann ich das Passwort ändern?')).toBe('german')
  })

  it('only returns configurations PostgreSQL has', () => {
    for (const [, t] of samples) expect(REGCONFIGS).toContain(regconfigFor(t))
  })
})
